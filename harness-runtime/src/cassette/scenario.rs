//! A cassette scenario's model, through its slot: the config each agent gets (the replay's, or
//! the user's pointed at the relay), and what the scenario's end checks (a replay's misses) or
//! writes (a recording). The slot's server is handed the replay or the relay as its recorded
//! answers; a second agent of the scenario gets the same ones.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::command::display_path;
use super::error::CassetteError;
use super::file::save;
use super::format::{Cassette, FORMAT, WireApi};
use super::relay::Relay;
use super::replay::Replay;
use super::replay_config::opencode_config;
use super::upstream::Upstream;
use crate::model::{ModelPlan, ModelSlot, ScriptedModel};
use crate::redact::Redactor;

/// Replay: serves the plan's cassette (loaded on first use) and returns the OpenCode config
/// pointing at it: the recorded model's name and entry, and `permission`.
///
/// Panics unless the plan is [`ModelPlan::Replay`] (the caller routes by plan).
pub(crate) fn replay_config(
    slot: &ModelSlot,
    permission: Value,
    redactor: &Arc<Redactor>,
) -> Result<Value, CassetteError> {
    let ModelPlan::Replay { path } = slot.plan() else {
        panic!("replay_config for a scenario planned as {:?}", slot.plan());
    };
    let model = slot.model()?;
    let replay = model.serve_recorded(|| Replay::load(path, slot.scenario(), redactor))?;
    let cassette = replay.cassette();
    let base_url = base_url(model, cassette.recorded.api);
    Ok(opencode_config(cassette, &base_url, permission))
}

/// Record: relays to the real provider of `user_config` (already adapted to the scenario:
/// permission, `model`), and returns that config with the provider's base URL pointing at the
/// relay and its credentials removed (the relay adds them upstream). The credentials are
/// registered as secrets of `redactor` first.
///
/// Panics unless the plan is [`ModelPlan::Record`] (the caller routes by plan).
pub(crate) fn record_config(
    slot: &ModelSlot,
    user_config: Value,
    redactor: &Arc<Redactor>,
) -> Result<Value, CassetteError> {
    if !matches!(slot.plan(), ModelPlan::Record { .. }) {
        panic!("record_config for a scenario planned as {:?}", slot.plan());
    }
    let upstream = Upstream::from_config(&user_config, &|name| std::env::var(name).ok())?;
    for secret in &upstream.secrets {
        redactor.add_secret(secret);
    }
    relayed_config(slot, upstream, &user_config, redactor)
}

/// Live: like [`record_config`] (the same relay, its retries and timing), but nothing is ever
/// written: [`finish_scenario`] writes for [`ModelPlan::Record`] only. `Err` when the provider
/// cannot be relayed (an `https://` one: the relay speaks plain HTTP); the caller then talks to
/// it directly.
///
/// Panics unless the plan is [`ModelPlan::Live`] (the caller routes by plan).
pub(crate) fn live_config(
    slot: &ModelSlot,
    user_config: Value,
    redactor: &Arc<Redactor>,
) -> Result<Value, CassetteError> {
    if !matches!(slot.plan(), ModelPlan::Live) {
        panic!("live_config for a scenario planned as {:?}", slot.plan());
    }
    let upstream = Upstream::from_config(&user_config, &|name| std::env::var(name).ok())?;
    for secret in &upstream.secrets {
        redactor.add_secret(secret);
    }
    relayed_config(slot, upstream, &user_config, redactor)
}

/// `user_config` pointed at the scenario's relay to `upstream` (started on first use).
fn relayed_config(
    slot: &ModelSlot,
    upstream: Upstream,
    user_config: &Value,
    redactor: &Arc<Redactor>,
) -> Result<Value, CassetteError> {
    let model = slot.model()?;
    let relay = model.serve_recorded(|| {
        Relay::new(upstream, redactor, slot.scenario(), slot.upstream_errors())
    })?;
    let upstream = relay.upstream();
    let base_url = base_url(model, upstream.recorded.api);
    Ok(upstream.relay_config(user_config, &base_url))
}

/// When the relay (recording or live) gave up retrying an upstream error: what the scenario's
/// failure says about it.
pub(crate) fn upstream_gave_up(slot: &ModelSlot) -> Option<String> {
    slot.started()
        .and_then(ScriptedModel::recorded::<Relay>)
        .and_then(|relay| relay.gave_up())
}

/// Ends the model's part of a scenario run by the runner, whatever its plan: the script's
/// check ([`ModelSlot::finish`]), or a replay's, which fails on a request that matched
/// nothing, naming the field that differs and the command that records again. A recording is
/// then written (as pending when `passed` is false or the check failed, saying so through
/// `progress`).
pub(crate) fn finish_scenario(
    slot: &mut ModelSlot,
    redactor: &Redactor,
    passed: bool,
    progress: &dyn Fn(&str),
) -> Result<(), CassetteError> {
    let checked = match slot.started().and_then(ScriptedModel::recorded::<Replay>) {
        Some(replay) => replay.report(redactor),
        None => slot.finish(redactor).map_err(CassetteError::from),
    };
    let ModelPlan::Record { path } = slot.plan() else {
        return checked;
    };
    let relay = slot.started().and_then(ScriptedModel::recorded::<Relay>);
    let written = match relay {
        Some(relay) => write(
            &relay,
            slot.scenario(),
            path,
            redactor,
            passed && checked.is_ok(),
            progress,
        ),
        None => {
            progress(&format!(
                "no cassette written: the scenario started no agent, so nothing was recorded \
                 ({} is unchanged)",
                display_path(path)
            ));
            Ok(())
        }
    };
    checked.and(written)
}

/// Writes what `relay` recorded for `scenario` to `path`, or beside it as pending when not
/// `passed`.
fn write(
    relay: &Relay,
    scenario: &str,
    path: &Path,
    redactor: &Redactor,
    passed: bool,
    progress: &dyn Fn(&str),
) -> Result<(), CassetteError> {
    let recorded = Cassette {
        format: FORMAT,
        scenario: scenario.to_owned(),
        recorded: relay.upstream().recorded.clone(),
        interactions: relay.interactions(),
    };
    let written =
        save(path, &recorded, redactor, !passed).map_err(|error| error.redacted(redactor))?;
    let shown = display_path(&written);
    progress(&if passed {
        format!("cassette written: {shown}")
    } else {
        format!(
            "cassette written as pending: {shown} (the scenario failed; fix it and record again)"
        )
    });
    Ok(())
}

/// The chat API's base URL on the scenario's model server.
fn base_url(model: &ScriptedModel, api: WireApi) -> String {
    match api {
        WireApi::OpenAi => model.base_url(),
        WireApi::Ollama => format!("{}/api", model.ollama_url()),
    }
}
