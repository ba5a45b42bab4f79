//! What Qwen Code (`qwen --acp`, npm `@qwen-code/qwen-code`, pinned in `package.json`) needs to
//! start as a scenario's ACP agent: a root of its own as its home, settings that turn off its
//! telemetry, update checks and folder-trust prompt, and the scripted model as its
//! OpenAI-compatible endpoint.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::AcpError;
use crate::model::ModelSlot;
use crate::opencode::{AgentOptions, StdioLaunch};
use crate::redact::Redactor;
use crate::sandbox::{Policy, program_paths};

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

/// Qwen Code's approval mode for OpenCode's `permission` rules: it asks by mode, not by tool, so
/// any rule that asks means `default` (it asks before edits and shell commands), and none means
/// `yolo` (it asks nothing), as the default `{"*": "allow", …}` does for OpenCode.
fn approval_mode(permission: &serde_json::Value) -> &'static str {
    let asks = |v: &serde_json::Value| match v {
        serde_json::Value::String(action) => action == "ask",
        serde_json::Value::Object(rules) => rules.values().any(|a| a == "ask"),
        _ => false,
    };
    match permission {
        serde_json::Value::Object(rules) if rules.values().any(asks) => "default",
        _ => "yolo",
    }
}

/// Prepares `qwen --acp` in a root of its own (its home, temp and XDG dirs there), pointed at
/// the scenario's scripted model, confined to its root and the model's port.
pub(crate) fn prepare(
    name: &str,
    manifest_dir: &Path,
    model: &mut ModelSlot,
    redactor: &Arc<Redactor>,
    index: usize,
    options: AgentOptions,
) -> Result<StdioLaunch, AcpError> {
    if options.config.is_some() || options.product_config.is_some() {
        return Err(AcpError::Unsupported {
            agent: "qwen-code",
            what: "an OpenCode config (`AgentOptions::config`, `product_config`) does not apply \
                   to it"
                .into(),
        });
    }
    let approval_mode = approval_mode(&options.permission);
    let program =
        crate::opencode::find_installed(PROGRAM, manifest_dir).ok_or(AcpError::AgentNotFound {
            program: PROGRAM,
            install: "npm ci (package.json pins @qwen-code/qwen-code)",
        })?;
    let scripted = model.model().map_err(|e| AcpError::Unsupported {
        agent: "qwen-code",
        what: format!("its model must be the scripted model: {e}"),
    })?;
    let (base_url, model_name) = (scripted.base_url(), scripted.model_name().to_string());
    let model_port = scripted.port();
    redactor.add_port(model_port);
    let sandbox = crate::sandbox::current().map_err(crate::opencode::ProvisionError::Sandbox)?;
    let root = crate::opencode::create_root(name, redactor, index, None)?;
    let settings_dir = root.home.join(".qwen");
    let written = std::fs::create_dir_all(&settings_dir).and_then(|()| {
        std::fs::write(
            settings_dir.join("settings.json"),
            serde_json::to_string_pretty(&settings(&model_name, approval_mode)).expect("json"),
        )
    });
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&root.root);
        return Err(crate::opencode::ProvisionError::io("write Qwen Code's settings", e).into());
    }
    let path = |p: &Path| p.display().to_string();
    let mut env = vec![
        ("HOME".to_string(), path(&root.home)),
        ("XDG_CONFIG_HOME".into(), path(&root.xdg_config)),
        ("XDG_DATA_HOME".into(), path(&root.xdg_data)),
        ("XDG_CACHE_HOME".into(), path(&root.xdg_cache)),
        ("XDG_STATE_HOME".into(), path(&root.xdg_state)),
        ("TMPDIR".into(), path(&root.tmp)),
        // The scripted model takes any key; a real one would be a secret.
        ("OPENAI_API_KEY".into(), "scripted".into()),
        ("OPENAI_BASE_URL".into(), base_url),
        ("OPENAI_MODEL".into(), model_name),
        // It would relaunch itself with a larger heap: one process is easier to own.
        ("QWEN_CODE_NO_RELAUNCH".into(), "1".into()),
        ("NO_COLOR".into(), "1".into()),
    ];
    for (name, value) in &options.env {
        redactor.add_env(name, value);
    }
    env.extend(options.env.iter().cloned());
    let mut policy = Policy::system();
    for path in program_paths(&program) {
        policy.allow_read(path);
    }
    policy.allow_write(&root.root);
    for path in &options.read_only {
        policy.allow_read(path);
    }
    for path in &options.writable {
        policy.allow_write(path);
    }
    policy.allow_connect(model_port);
    Ok(StdioLaunch {
        sandbox_line: sandbox.line(None),
        policy: sandbox.is_on().then_some(policy),
        root,
        program,
        args: vec!["--acp".into()],
        env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_rule_that_asks_makes_it_ask() {
        assert_eq!(
            approval_mode(&json!({"*": "allow", "external_directory": "deny"})),
            "yolo"
        );
        assert_eq!(
            approval_mode(&json!({"*": "allow", "bash": "ask"})),
            "default"
        );
        assert_eq!(
            approval_mode(&json!({"bash": {"rm *": "ask", "*": "allow"}})),
            "default"
        );
        assert_eq!(approval_mode(&json!({})), "yolo");
    }
}
