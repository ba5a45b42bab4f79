//! What Gemini CLI (`gemini --acp`, npm `@google/gemini-cli`, pinned in `package.json`) needs to
//! start as a scenario's ACP agent: the scripted model as its Gemini API endpoint
//! (`GOOGLE_GEMINI_BASE_URL`, an API key), settings that turn off its usage statistics,
//! telemetry, auto-update, folder trust, IDE integration and every model call beside the turn,
//! and none of the caller's own Gemini or Google variables.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::AcpError;
use super::npm_agent::{NpmAgent, Start, approval_mode};
use crate::model::ModelSlot;
use crate::opencode::{AgentOptions, StdioLaunch};
use crate::redact::Redactor;

/// The executable `npm ci` installs.
pub(crate) const PROGRAM: &str = "gemini";

/// The model it is told it talks to. It shapes its tools by the model's family (its todo tool,
/// `write_todos`, only for Gemini 2 models), and the scripted model answers any name: the
/// family its own default (`gemini-2.5-flash`) belongs to.
const MODEL: &str = "gemini-2.5-flash";

/// Its settings (`~/.gemini/settings.json`), as measured on 0.61.0: its usage statistics are the
/// one thing it sends elsewhere by default (`play.googleapis.com`); a fixed model skips the
/// router's classifier call (the default `auto` asks a second model first); one attempt, so a
/// scripted error fails the turn at once instead of after minutes of backoff.
fn settings(model: &str) -> serde_json::Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "general": {
            "enableAutoUpdate": false,
            "enableAutoUpdateNotification": false,
            "sessionRetention": {"enabled": false},
            "maxAttempts": 1,
        },
        "ide": {"enabled": false},
        "model": {"name": model, "disableLoopDetection": true, "skipNextSpeakerCheck": true},
        // Its own `.env` files and memory would bring in what the scenario did not set.
        "advanced": {"ignoreLocalEnv": true, "autoConfigureMemory": false},
        "experimental": {"enableAgents": false, "autoMemory": false},
        "skills": {"enabled": false},
    })
}

/// Inherited variables it reads that are the caller's, not the scenario's: keys, endpoints,
/// models and projects (`GEMINI_*`, `GOOGLE_*`), telemetry (`OTEL_*`), and proxies, which
/// would tunnel even its loopback model traffic.
fn inherited_to_unset() -> Vec<String> {
    crate::settings::inherited_names(|name| {
        let upper = name.to_ascii_uppercase();
        ["GEMINI_", "GOOGLE_", "OTEL_"]
            .iter()
            .any(|prefix| upper.starts_with(prefix))
            || ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"].contains(&upper.as_str())
    })
}

/// Prepares `gemini --acp` in a root of its own, pointed at the scenario's scripted model as
/// its Gemini API. Its approval mode follows `permission`: `default` (it asks before edits and
/// shell commands) when any rule asks, else `yolo` (a command-line option only).
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
        agent: "gemini-cli",
        program: PROGRAM,
        install: "npm ci (package.json pins @google/gemini-cli)",
        settings_file: ".gemini/settings.json",
    };
    agent.prepare(
        name,
        manifest_dir,
        model,
        redactor,
        index,
        options,
        |scripted, root| {
            let in_root = |file: &str| root.root.join(file).display().to_string();
            Start {
                settings: settings(MODEL),
                env: vec![
                    // The scripted model takes any key; a real one would be a secret.
                    ("GEMINI_API_KEY".into(), "scripted".into()),
                    ("GOOGLE_GEMINI_BASE_URL".into(), scripted.ollama_url()),
                    // Its system-wide settings are /etc's by default: none, in its root.
                    (
                        "GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(),
                        in_root("gemini-system-settings.json"),
                    ),
                    (
                        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".into(),
                        in_root("gemini-system-defaults.json"),
                    ),
                    // It would relaunch itself as a child that ignores SIGTERM: one process is
                    // easier to own.
                    ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
                ],
                unset: inherited_to_unset(),
                args: vec![
                    "--acp".into(),
                    "--approval-mode".into(),
                    approval_mode.into(),
                ],
            }
        },
    )
}
