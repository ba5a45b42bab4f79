//! The scenario's model slot: lazy start, OpenCode config, the end-of-scenario check.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Value, json};

use super::error::ModelError;
use super::recording::{Answer, ModelRequest};
use super::relay::Relay;
use super::replay::Replay;
use super::scripted_model::ScriptedModel;
use super::server::{self, ServerGuard};
use super::source::Source;
use crate::cassette::{self, Cassette, ModelPlan, Upstream, WireApi};
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
    /// A second agent of the scenario gets the same cassette.
    ///
    /// Panics unless the plan is [`ModelPlan::Replay`] (the caller routes by plan).
    pub(crate) fn replay_config(
        &mut self,
        permission: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, ModelError> {
        let ModelPlan::Replay { path } = &self.plan else {
            panic!("replay_config for a scenario planned as {:?}", self.plan);
        };
        let shared = &self.model()?.shared;
        if let Source::Script = shared.source() {
            let cassette = cassette::load(path, &self.scenario)?;
            let replay = Replay::new(
                cassette,
                path.clone(),
                self.scenario.clone(),
                Arc::clone(redactor),
            );
            shared.set_source(Source::Replay(replay));
        }
        let Source::Replay(replay) = shared.source() else {
            panic!("the model server of a replayed scenario serves something else");
        };
        let cassette = replay.cassette();
        let base_url = base_url(shared.addr, cassette.recorded.api);
        Ok(cassette::opencode_config(cassette, &base_url, permission))
    }

    /// Record: starts the relay to the real provider of `user_config` (already adapted to the
    /// scenario: permission, `model`), and returns that config with the provider's base URL
    /// pointing at the relay and its credentials removed (the relay adds them upstream). The
    /// credentials are registered as secrets of `redactor` first. A second agent of the
    /// scenario shares the relay.
    ///
    /// Panics unless the plan is [`ModelPlan::Record`] (the caller routes by plan).
    pub(crate) fn record_config(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, ModelError> {
        if !matches!(self.plan, ModelPlan::Record { .. }) {
            panic!("record_config for a scenario planned as {:?}", self.plan);
        }
        let upstream = Upstream::from_config(&user_config, &|name| std::env::var(name).ok())?;
        for secret in &upstream.secrets {
            redactor.add_secret(secret);
        }
        let shared = &self.model()?.shared;
        if let Source::Script = shared.source() {
            let relay = Relay::new(upstream, redactor)?;
            shared.set_source(Source::Relay(relay));
        }
        let Source::Relay(relay) = shared.source() else {
            panic!("the model server of a recorded scenario serves something else");
        };
        let upstream = relay.upstream();
        let base_url = base_url(shared.addr, upstream.recorded.api);
        Ok(upstream.relay_config(&user_config, &base_url))
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
        let checked = self.finish(redactor);
        let ModelPlan::Record { path } = &self.plan else {
            return checked;
        };
        let written = self.write_cassette(path, redactor, passed && checked.is_ok(), progress);
        checked.and(written)
    }

    /// Writes what the relay recorded to `path`, or beside it as pending when not `passed`.
    fn write_cassette(
        &self,
        path: &Path,
        redactor: &Redactor,
        passed: bool,
        progress: &dyn Fn(&str),
    ) -> Result<(), String> {
        let relay = self
            .running
            .get()
            .and_then(|running| match running.model.shared.source() {
                Source::Relay(relay) => Some(relay),
                _ => None,
            });
        let Some(relay) = relay else {
            progress(&format!(
                "no cassette written: the scenario started no agent, so nothing was recorded \
                 ({} is unchanged)",
                cassette::display_path(path)
            ));
            return Ok(());
        };
        let recorded = Cassette {
            format: cassette::FORMAT,
            scenario: self.scenario.clone(),
            recorded: relay.upstream().recorded.clone(),
            interactions: relay.interactions(),
        };
        let written = cassette::save(path, &recorded, redactor, !passed)
            .map_err(|e| redactor.redact(&e.to_string()))?;
        let shown = cassette::display_path(&written);
        progress(&if passed {
            format!("cassette written: {shown}")
        } else {
            format!(
                "cassette written as pending: {shown} (the scenario failed; fix it and record again)"
            )
        });
        Ok(())
    }

    /// Ends the model's part of the scenario: a script mistake fails it (a request nothing
    /// answered, a scripted call of a tool the request did not offer), with a summary of each
    /// (redacted). The server keeps running until the slot drops, so agents stopped after this
    /// see no connection errors.
    pub fn finish(&mut self, redactor: &crate::redact::Redactor) -> Result<(), String> {
        let Some(running) = self.running.get() else {
            return Ok(());
        };
        if let Source::Replay(replay) = running.model.shared.source() {
            return replay.report(redactor);
        }
        let requests = running.model.requests();
        let mut sections = Vec::new();
        let misses: Vec<String> = requests
            .iter()
            .filter(|r| r.answer == Answer::Miss)
            .map(ModelRequest::one_line)
            .collect();
        if !misses.is_empty() {
            sections.push(section(
                &format!(
                    "{} request(s) had no scripted reply (answered with HTTP 400); queue replies \
                     with live.model().reply(..) or add a rule:",
                    misses.len()
                ),
                &misses,
            ));
        }
        let unoffered: Vec<String> = requests
            .iter()
            .filter_map(|r| match &r.answer {
                Answer::UnofferedTool { tool, .. } => Some(format!(
                    "tool {tool:?} (offered: {}): {}",
                    r.offered_list(),
                    r.one_line()
                )),
                _ => None,
            })
            .collect();
        if !unoffered.is_empty() {
            sections.push(section(
                &format!(
                    "{} scripted tool call(s) named a tool the request did not offer (answered \
                     with HTTP 400); script a tool the agent offers (OpenCode does not offer a \
                     tool its permission config denies, nor StructuredOutput without a \
                     json_schema format):",
                    unoffered.len()
                ),
                &unoffered,
            ));
        }
        if sections.is_empty() {
            return Ok(());
        }
        Err(redactor.redact(&sections.join("\n")))
    }
}

/// `scripted model: <head>` and one `  - ` line per item.
fn section(head: &str, items: &[String]) -> String {
    let mut message = format!("scripted model: {head}");
    for item in items {
        message.push_str("\n  - ");
        message.push_str(item);
    }
    message
}

/// The chat API's base URL on the embedded server at `addr`.
fn base_url(addr: SocketAddr, api: WireApi) -> String {
    match api {
        WireApi::OpenAi => format!("http://{addr}/v1"),
        WireApi::Ollama => format!("http://{addr}/api"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripted_config_enables_only_its_provider_so_it_is_spared_the_models_catalog() {
        let config = config("http://127.0.0.1:1/v1", json!({}));
        assert_eq!(config["enabled_providers"], json!([PROVIDER_ID]));
        assert_eq!(
            crate::opencode::ModelsCatalog::for_config(&config),
            crate::opencode::ModelsCatalog::Empty
        );
    }
}
