//! The scenario's model slot: lazy start, OpenCode config, the end-of-scenario check.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::error::ModelError;
use super::plan::ModelPlan;
use super::recording::Answer;
use super::scripted_model::ScriptedModel;
use super::server::{self, ServerGuard};
use crate::redact::Redactor;
use crate::scenario::ModelApi;

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
    /// The scenario asked for the real model's upstream errors as they come (no retry, recorded):
    /// shared with the relay, which reads it at each answer.
    upstream_errors: Arc<AtomicBool>,
    /// The provider package OpenCode talks to the scripted model with (`model_api = "…"`).
    api: ModelApi,
    /// The environment a relay of this slot reads (`SSL_CERT_FILE`, key variables,
    /// `{env:NAME}`) instead of the process's: a test's own CA without touching the process.
    relay_env: Option<RelayEnv>,
    /// An exploring run's scheduler, handed to the model when it starts.
    scheduler: Option<Arc<crate::explore::Scheduler>>,
}

/// A variable's value by its name, `None` when unset.
pub(crate) type EnvFn = dyn Fn(&str) -> Option<String> + Send + Sync;

/// An environment given to the relay in place of the process's.
#[derive(Clone)]
pub(crate) struct RelayEnv(pub(crate) Arc<EnvFn>);

impl std::fmt::Debug for RelayEnv {
    /// Nothing of it: its values may be keys.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RelayEnv(..)")
    }
}

impl ModelSlot {
    /// The running model, starting the server on the current tokio runtime if needed
    /// (`live.model()` is the scenario's way in; this one reports errors instead of panicking).
    pub fn model(&self) -> Result<&ScriptedModel, ModelError> {
        if let Some(running) = self.running.get() {
            return Ok(&running.model);
        }
        let (model, server) = server::start(MODEL_ID)?;
        if let Some(scheduler) = &self.scheduler {
            model.shared.explore_with(scheduler.clone());
        }
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
        let base_url = match self.api {
            ModelApi::Google => format!("{}/v1beta", model.ollama_url()),
            _ => model.base_url(),
        };
        config(self.api, &base_url, permission)
    }

    /// Sets the provider package OpenCode talks to the scripted model with, before its config
    /// is written (`Live::new` does, from the scenario's `model_api`).
    pub fn set_api(&mut self, api: ModelApi) {
        self.api = api;
    }

    /// Sets how the scenario's model is served, before first use (`Live::new` does, with the
    /// plan the runner resolved for the scenario `scenario`).
    pub(crate) fn set_plan(&mut self, plan: ModelPlan, scenario: &str) {
        self.plan = plan;
        self.scenario = scenario.to_string();
    }

    /// Makes the relay (recording or live) read `env` instead of the process's environment.
    /// In an exploring run: the scripted model's answers are steps of `scheduler`.
    pub(crate) fn explore_with(&mut self, scheduler: Arc<crate::explore::Scheduler>) {
        self.scheduler = Some(scheduler);
    }

    pub(crate) fn set_relay_env(&mut self, env: RelayEnv) {
        self.relay_env = Some(env);
    }

    /// The environment set by [`set_relay_env`](Self::set_relay_env), if any.
    pub(crate) fn relay_env(&self) -> Option<RelayEnv> {
        self.relay_env.clone()
    }

    /// Asks the relay (recording or live) to relay and record the upstream's 429 and 5xx
    /// answers as they come instead of retrying them.
    pub(crate) fn record_upstream_errors(&self) {
        self.upstream_errors.store(true, Ordering::Relaxed);
    }

    /// The flag of [`record_upstream_errors`](Self::record_upstream_errors), for the relay.
    pub(crate) fn upstream_errors(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.upstream_errors)
    }

    /// The plan set by [`set_plan`](Self::set_plan).
    pub(crate) fn plan(&self) -> &ModelPlan {
        &self.plan
    }

    /// `<topic>::<fn>` of the scenario set by [`set_plan`](Self::set_plan).
    pub(crate) fn scenario(&self) -> &str {
        &self.scenario
    }

    /// The running model, if anything started it.
    pub(crate) fn started(&self) -> Option<&ScriptedModel> {
        self.running.get().map(|running| &running.model)
    }

    /// Ends the model's part of the scenario: a script mistake fails it (a request nothing
    /// answered, a scripted call of a tool the request did not offer), naming each request
    /// (redacted). Requests answered by recorded answers are theirs to check. The server keeps
    /// running until the slot drops, so agents stopped after this see no connection errors.
    pub fn finish(&mut self, redactor: &Redactor) -> Result<(), ModelError> {
        let Some(running) = self.running.get() else {
            return Ok(());
        };
        if running.model.shared.recorded_answers().is_some() {
            return Ok(());
        }
        let requests = running.model.requests();
        let misses: Vec<String> = requests
            .iter()
            .filter(|r| r.answer == Answer::Miss)
            .map(|r| redactor.redact(&r.one_line()))
            .collect();
        let unoffered: Vec<String> = requests
            .iter()
            .filter_map(|r| match &r.answer {
                Answer::UnofferedTool { tool, .. } => Some(redactor.redact(&format!(
                    "tool {tool:?} (offered: {}): {}",
                    r.offered_list(),
                    r.one_line()
                ))),
                _ => None,
            })
            .collect();
        if misses.is_empty() && unoffered.is_empty() {
            return Ok(());
        }
        Err(ModelError::ScriptMistakes { misses, unoffered })
    }
}

/// The npm package of OpenCode's provider for `api` (bundled in OpenCode's binary).
fn package(api: ModelApi) -> &'static str {
    match api {
        ModelApi::OpenAiCompatible => "@ai-sdk/openai-compatible",
        ModelApi::OpenAi => "@ai-sdk/openai",
        ModelApi::Anthropic => "@ai-sdk/anthropic",
        ModelApi::Google => "@ai-sdk/google",
    }
}

/// The OpenCode config for a scripted model at `base_url`, reached through `api`'s package.
fn config(api: ModelApi, base_url: &str, permission: Value) -> Value {
    let mut options = json!({"baseURL": base_url});
    if api != ModelApi::OpenAiCompatible {
        // These packages refuse to send a request without a key; the scripted model ignores it.
        options["apiKey"] = json!("scripted-model-key");
    }
    json!({
        "autoupdate": false,
        "share": "disabled",
        "enabled_providers": [PROVIDER_ID],
        "provider": {PROVIDER_ID: {
            "npm": package(api),
            "name": "Scripted model",
            "options": options,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripted_config_enables_only_its_provider_so_it_is_spared_the_models_catalog() {
        for api in [
            ModelApi::OpenAiCompatible,
            ModelApi::OpenAi,
            ModelApi::Anthropic,
            ModelApi::Google,
        ] {
            let config = config(api, "http://127.0.0.1:1/v1", json!({}));
            assert_eq!(config["enabled_providers"], json!([PROVIDER_ID]));
            assert_eq!(
                crate::opencode::ModelsCatalog::for_config(&config),
                crate::opencode::ModelsCatalog::Empty,
                "{api:?}"
            );
        }
    }
}
