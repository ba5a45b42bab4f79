//! What Qwen Code (`qwen --acp`, npm `@qwen-code/qwen-code`, pinned in `package.json`) needs to
//! start as a scenario's ACP agent: a root of its own as its home, settings that turn off its
//! telemetry, update checks and folder-trust prompt, and the scripted model as its
//! OpenAI-compatible endpoint.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::AcpError;
use super::npm_agent::{NpmAgent, Start, approval_mode};
use crate::model::ModelSlot;
use crate::opencode::{AgentOptions, StdioLaunch};
use crate::redact::Redactor;

/// The executable `npm ci` installs.
pub(crate) const PROGRAM: &str = "qwen";

/// Its settings (`~/.qwen/settings.json`): nothing leaves the machine on its own, nothing
/// waits for a person but what `approval_mode` asks, the model is the one its environment
/// names, and it asks the model nothing beside the turn (no next-speaker check, no loop
/// detection by the model, no start-up context, no memory or follow-up suggestion after a turn).
fn settings(model: &str, approval_mode: &str) -> serde_json::Value {
    json!({
        // Its todo tool (off by default) is how it reports a plan (ACP `plan` updates).
        "tools": {"approvalMode": approval_mode, "todoWrite": {"enabled": true}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "security": {
            "auth": {"selectedType": "openai"},
            "folderTrust": {"enabled": false},
        },
        "ide": {"enabled": false, "hasSeenNudge": true},
        // A follow-up suggestion would ask the model after a turn too.
        "ui": {"enableFollowupSuggestions": false},
        // Its memory and skills would ask the model in the background after a turn.
        "memory": {
            "enableManagedAutoMemory": false,
            "enableManagedAutoDream": false,
            "enableAutoSkill": false,
            "enableTeamMemory": false,
        },
        // Only the turn's own requests reach the model: a script answers them in order.
        "model": {
            "name": model,
            "skipNextSpeakerCheck": true,
            "skipLoopDetection": true,
            "skipStartupContext": true,
        },
    })
}

/// Prepares `qwen --acp` in a root of its own, pointed at the scenario's scripted model as its
/// OpenAI-compatible endpoint. It asks by mode, not by tool: any rule of `permission` that asks
/// means `default` (it asks before edits and shell commands), none means `yolo`.
pub(crate) fn prepare(
    name: &str,
    manifest_dir: &Path,
    model: &mut ModelSlot,
    redactor: &Arc<Redactor>,
    index: usize,
    options: AgentOptions,
) -> Result<StdioLaunch, AcpError> {
    let approval_mode = approval_mode(&options.permission);
    let agent = NpmAgent {
        agent: "qwen-code",
        program: PROGRAM,
        install: "npm ci (package.json pins @qwen-code/qwen-code)",
        settings_file: ".qwen/settings.json",
    };
    agent.prepare(
        name,
        manifest_dir,
        model,
        redactor,
        index,
        options,
        |scripted, _root| {
            let model_name = scripted.model_name().to_string();
            Start {
                settings: settings(&model_name, approval_mode),
                env: vec![
                    // The scripted model takes any key; a real one would be a secret.
                    ("OPENAI_API_KEY".into(), "scripted".into()),
                    ("OPENAI_BASE_URL".into(), scripted.base_url()),
                    ("OPENAI_MODEL".into(), model_name),
                    // It would relaunch itself with a larger heap: one process is easier to own.
                    ("QWEN_CODE_NO_RELAUNCH".into(), "1".into()),
                ],
                unset: Vec::new(),
                args: vec!["--acp".into()],
            }
        },
    )
}
