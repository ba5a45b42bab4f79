//! What every agent installed from npm (Qwen Code, Gemini CLI) needs to start as a scenario's ACP
//! agent: its program found beside the checkout, a root of its own as its home (temp and XDG
//! directories there), its settings file written into that home, the scripted model as its
//! model, and a sandbox that lets it read its program and write its root, and connect to the
//! model alone. Each agent's file says only what differs: its settings, environment and
//! arguments.

use std::path::Path;
use std::sync::Arc;

use super::AcpError;
use crate::model::{ModelSlot, ScriptedModel};
use crate::opencode::{AgentOptions, AgentRoot, StdioLaunch};
use crate::redact::Redactor;
use crate::sandbox::{Policy, program_paths};

/// An agent installed by `npm ci`.
pub(crate) struct NpmAgent {
    /// Its kind's name, for errors: `qwen-code`.
    pub(crate) agent: &'static str,
    /// The executable in `node_modules/.bin`: `qwen`.
    pub(crate) program: &'static str,
    /// What installs it.
    pub(crate) install: &'static str,
    /// Its settings file, relative to its home: `.qwen/settings.json`.
    pub(crate) settings_file: &'static str,
}

/// What an agent's own file decides once the model and the root are known.
pub(crate) struct Start {
    /// Written as its settings file.
    pub(crate) settings: serde_json::Value,
    /// Set after the hermetic variables (home, XDG, temp).
    pub(crate) env: Vec<(String, String)>,
    /// Inherited variables it must not see (a user's own keys and endpoints for it).
    pub(crate) unset: Vec<String>,
    pub(crate) args: Vec<String>,
}

impl NpmAgent {
    /// Prepares the agent in a root of its own, pointed at the scenario's scripted model,
    /// confined to its root and the model's port. `start` decides the settings, environment and
    /// arguments from the running model and the root.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare(
        &self,
        name: &str,
        manifest_dir: &Path,
        model: &mut ModelSlot,
        redactor: &Arc<Redactor>,
        index: usize,
        options: AgentOptions,
        start: impl FnOnce(&ScriptedModel, &AgentRoot) -> Start,
    ) -> Result<StdioLaunch, AcpError> {
        if options.config.is_some() || options.product_config.is_some() {
            return Err(AcpError::Unsupported {
                agent: self.agent,
                what: "an OpenCode config (`AgentOptions::config`, `product_config`) does not \
                       apply to it"
                    .into(),
            });
        }
        let program = crate::opencode::find_installed(self.program, manifest_dir).ok_or(
            AcpError::AgentNotFound {
                program: self.program,
                install: self.install,
            },
        )?;
        let scripted = model.model().map_err(|e| AcpError::Unsupported {
            agent: self.agent,
            what: format!("its model must be the scripted model: {e}"),
        })?;
        let model_port = scripted.port();
        redactor.add_port(model_port);
        let sandbox =
            crate::sandbox::current().map_err(crate::opencode::ProvisionError::Sandbox)?;
        let root = crate::opencode::create_root(name, redactor, index, None)?;
        let decided = start(scripted, &root);
        let settings_path = root.home.join(self.settings_file);
        let written = settings_path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                std::fs::write(
                    &settings_path,
                    serde_json::to_string_pretty(&decided.settings).expect("json"),
                )
            });
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&root.root);
            let what = format!("write {}'s settings", self.agent);
            return Err(crate::opencode::ProvisionError::io(&what, e).into());
        }
        let path = |p: &Path| p.display().to_string();
        let mut env = vec![
            ("HOME".to_string(), path(&root.home)),
            ("XDG_CONFIG_HOME".into(), path(&root.xdg_config)),
            ("XDG_DATA_HOME".into(), path(&root.xdg_data)),
            ("XDG_CACHE_HOME".into(), path(&root.xdg_cache)),
            ("XDG_STATE_HOME".into(), path(&root.xdg_state)),
            ("TMPDIR".into(), path(&root.tmp)),
            ("NO_COLOR".into(), "1".into()),
        ];
        env.extend(decided.env);
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
            args: decided.args,
            env,
            unset: decided.unset,
        })
    }
}

/// The approval mode of an agent that asks by mode, not by tool (Qwen Code, Gemini CLI):
/// `default` (it asks before edits and shell commands) when any rule of `permission` asks, else
/// `yolo`.
pub(crate) fn approval_mode(permission: &serde_json::Value) -> &'static str {
    if any_rule_asks(permission) {
        "default"
    } else {
        "yolo"
    }
}

/// Whether OpenCode's `permission` rules ask anywhere: the agents that ask by mode, not by tool,
/// ask before edits and shell commands when any rule does, and nothing when none does (as the
/// default `{"*": "allow", …}` does for OpenCode).
fn any_rule_asks(permission: &serde_json::Value) -> bool {
    let asks = |v: &serde_json::Value| match v {
        serde_json::Value::String(action) => action == "ask",
        serde_json::Value::Object(rules) => rules.values().any(|a| a == "ask"),
        _ => false,
    };
    matches!(permission, serde_json::Value::Object(rules) if rules.values().any(asks))
}

#[cfg(test)]
mod tests {
    use super::any_rule_asks;
    use serde_json::json;

    #[test]
    fn any_rule_that_asks_makes_it_ask() {
        assert!(!any_rule_asks(
            &json!({"*": "allow", "external_directory": "deny"})
        ));
        assert!(any_rule_asks(&json!({"*": "allow", "bash": "ask"})));
        assert!(any_rule_asks(
            &json!({"bash": {"rm *": "ask", "*": "allow"}})
        ));
        assert!(!any_rule_asks(&json!({})));
    }
}
