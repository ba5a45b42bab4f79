//! The scenario's model slot: lazy start, OpenCode config, the end-of-scenario check.

use std::sync::OnceLock;

use serde_json::{Value, json};

use super::error::ModelError;
use super::scripted_model::ScriptedModel;
use super::server::{self, ServerGuard};

/// The provider id OpenCode's config uses for the scripted model.
pub const PROVIDER_ID: &str = "scripted";
/// The model id the scripted model serves.
pub const MODEL_ID: &str = "scripted-model";

#[derive(Debug)]
struct Running {
    model: ScriptedModel,
    _server: ServerGuard,
}

/// The scenario's scripted model, started on first use; stopped (with every connection, held
/// replies included) when the slot is dropped.
#[derive(Debug, Default)]
pub struct ModelSlot {
    running: OnceLock<Running>,
}

impl ModelSlot {
    /// The running model, starting the server on the current tokio runtime if needed
    /// (`live.model()` is the scenario's way in; this one reports errors instead of panicking).
    pub fn model(&self) -> Result<&ScriptedModel, ModelError> {
        if let Some(running) = self.running.get() {
            return Ok(&running.model);
        }
        let (model, server) = server::start(MODEL_ID)?;
        // Live is used from one task at a time; should another start have won, ours is dropped
        // (and its server aborted) here.
        let _ = self.running.set(Running {
            model,
            _server: server,
        });
        Ok(&self.running.get().expect("set just above").model)
    }

    /// The `OPENCODE_CONFIG_CONTENT` for a scenario without `requires`: a provider pointing at
    /// the scripted model (started on first use, inside the scenario's runtime), the enabled
    /// providers, and `permission` (OpenCode's permission config, e.g. `{"bash":"ask"}`).
    ///
    /// Panics when called outside a tokio runtime or when loopback cannot be bound (a bug in
    /// the caller, or a machine that cannot run scenarios at all).
    pub fn opencode_config(&mut self, permission: Value) -> Value {
        let model = match self.model() {
            Ok(model) => model,
            Err(error) => panic!("{error}"),
        };
        config(&model.base_url(), permission)
    }

    /// Ends the model's part of the scenario: an unanswered request fails it, with a summary
    /// of each (redacted). The server keeps running until the slot drops, so agents stopped
    /// after this see no connection errors.
    pub fn finish(&mut self, redactor: &crate::redact::Redactor) -> Result<(), String> {
        let Some(running) = self.running.get() else {
            return Ok(());
        };
        let misses = running.model.misses();
        if misses.is_empty() {
            return Ok(());
        }
        let mut message = format!(
            "scripted model: {} request(s) had no scripted reply (answered with HTTP 500); \
             queue replies with live.model().reply(..) or add a rule:",
            misses.len()
        );
        for miss in &misses {
            message.push_str("\n  - ");
            message.push_str(&miss.one_line());
        }
        Err(redactor.redact(&message))
    }
}

/// The OpenCode config for a scripted model at `base_url`.
fn config(base_url: &str, permission: Value) -> Value {
    json!({
        "autoupdate": false,
        "share": "disabled",
        "enabled_providers": [PROVIDER_ID],
        "provider": {PROVIDER_ID: {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted model",
            "options": {"baseURL": base_url},
            "models": {MODEL_ID: {
                "name": MODEL_ID,
                "tool_call": true,
                "attachment": false,
                "reasoning": false,
                "temperature": true,
                "limit": {"context": 128000, "output": 4096},
            }},
        }},
        "model": format!("{PROVIDER_ID}/{MODEL_ID}"),
        "small_model": format!("{PROVIDER_ID}/{MODEL_ID}"),
        "permission": permission,
    })
}
