//! The scenario's model slot: lazy start, OpenCode config, the end-of-scenario check.

use std::sync::OnceLock;

use serde_json::{Value, json};

use std::sync::Arc;

use super::error::ModelError;
use super::scripted_model::ScriptedModel;
use super::server::{self, ServerGuard};
use crate::cassette::ModelPlan;
use crate::redact::Redactor;

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
    /// How this scenario's model is served (scripted unless the runner says otherwise).
    plan: ModelPlan,
    /// `<topic>::<fn>`, for the cassette and the command that re-records it.
    scenario: String,
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

    /// Sets how the scenario's model is served, before first use (`Live::new` does, with the
    /// plan the runner resolved for the scenario `scenario`).
    pub(crate) fn set_plan(&mut self, plan: ModelPlan, scenario: &str) {
        self.plan = plan;
        self.scenario = scenario.to_string();
    }

    /// The plan set by [`set_plan`](Self::set_plan).
    pub(crate) fn plan(&self) -> &ModelPlan {
        &self.plan
    }

    /// Replay: loads the plan's cassette, starts the server serving it, and returns the
    /// OpenCode config pointing at it (the recorded model's name and entry, `permission`).
    pub(crate) fn replay_config(
        &mut self,
        permission: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, ModelError> {
        let _ = (permission, redactor, &self.scenario);
        todo!("cassette replay")
    }

    /// Record: starts the relay to the real provider of `user_config` (already adapted to the
    /// scenario: permission, `model`), and returns that config with the provider's base URL
    /// pointing at the relay and its credentials removed (the relay adds them upstream).
    pub(crate) fn record_config(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, ModelError> {
        let _ = (user_config, redactor);
        todo!("cassette record")
    }

    /// Ends the model's part of a scenario run by the runner: [`finish`](Self::finish), then per
    /// plan: record writes the cassette (as pending when `passed` is false, saying so through
    /// `progress`); replay fails on a request that matched nothing, naming the field that
    /// differs and the command that re-records.
    pub(crate) fn finish_scenario(
        &mut self,
        redactor: &Redactor,
        passed: bool,
        progress: &dyn Fn(&str),
    ) -> Result<(), String> {
        let _ = (passed, progress);
        self.finish(redactor)
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
