//! A cassette scenario's model, through its slot: the config each agent gets (the replay's, or
//! the user's pointed at the relay), and what the scenario's end checks (a replay's misses) or
//! writes (a recording). The slot's server is handed the replay or the relay as its recorded
//! answers; a second agent of the scenario gets the same ones.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::command::{display_path, rerecord_command};
use super::drift::drift;
use super::error::CassetteError;
use super::file::{load, save};
use super::format::{Cassette, FORMAT, Verdict, WireApi};
use super::provenance::provenance;
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
    match slot.relay_env() {
        Some(env) => record_config_with(slot, user_config, redactor, &*env.0),
        None => record_config_with(slot, user_config, redactor, &crate::settings::unicode),
    }
}

/// [`record_config`] with the environment (`{env:NAME}`, key variables, `SSL_CERT_FILE`) given
/// (the slot's, when it was given one, else the process's, as [`record_config`] picks).
pub(super) fn record_config_with(
    slot: &ModelSlot,
    user_config: Value,
    redactor: &Arc<Redactor>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Value, CassetteError> {
    if !matches!(slot.plan(), ModelPlan::Record { .. }) {
        panic!("record_config for a scenario planned as {:?}", slot.plan());
    }
    let upstream = Upstream::from_config(&user_config, env)?;
    for secret in &upstream.secrets {
        redactor.add_secret(secret);
    }
    relayed_config(slot, upstream, &user_config, redactor)
}

/// Live: like [`record_config`] (the same relay, its retries and timing), but nothing is ever
/// written: [`finish_scenario`] writes for [`ModelPlan::Record`] only. `Err` when the provider
/// cannot be relayed (one signed per request, or of an API the relay does not speak); the
/// caller then talks to it directly.
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
    let upstream = match slot.relay_env() {
        Some(env) => Upstream::from_config(&user_config, &*env.0)?,
        None => Upstream::from_config(&user_config, &crate::settings::unicode)?,
    };
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

/// How a scenario's run ended and what ran it: what a recording keeps as its provenance, and a
/// verifying run compares with the cassette's.
#[derive(Clone, Debug)]
pub(crate) struct RunEnd {
    /// Passed, skipped (with the reason) or failed: the body's verdict.
    pub(crate) verdict: Verdict,
    /// The OpenCode version the scenario's agent reported, when known.
    pub(crate) opencode: Option<String>,
}

/// Ends the model's part of a scenario run by the runner, whatever its plan: the script's
/// check ([`ModelSlot::finish`]), or a replay's, which fails on a request that matched
/// nothing, naming the field that differs and the command that records again. A recording is
/// then written with its provenance (as pending when the run failed or the check did, saying so
/// through `progress`); under `LIVE_CASSETTE=verify` it is compared with the cassette instead
/// and nothing is written. Returns what the run report shows of it (a verifying run's drift).
pub(crate) fn finish_scenario(
    slot: &mut ModelSlot,
    redactor: &Redactor,
    end: RunEnd,
    progress: &dyn Fn(&str),
) -> Result<Option<String>, CassetteError> {
    let checked = match slot.started().and_then(ScriptedModel::recorded::<Replay>) {
        Some(replay) => replay.report(redactor),
        None => slot.finish(redactor).map_err(CassetteError::from),
    };
    let ModelPlan::Record { path } = slot.plan() else {
        return checked.map(|()| None);
    };
    let verdict = match (&checked, end.verdict) {
        (Err(_), _) => Verdict::Failed,
        (Ok(()), verdict) => verdict,
    };
    let relay = slot.started().and_then(ScriptedModel::recorded::<Relay>);
    // The one process-wide mode, checked before any trial: a `Record` plan under `verify` is a
    // verifying run (its cassette exists; see `plan::resolve`).
    let verifying = crate::settings::cassette_mode() == Ok(crate::settings::CassetteMode::Verify);
    let ended = match relay {
        Some(relay) if verifying => {
            let strict = crate::settings::strict();
            verify(&relay, slot.scenario(), path, &verdict, strict, progress)
        }
        Some(relay) => {
            let end = RunEnd {
                verdict,
                opencode: end.opencode,
            };
            write(&relay, slot.scenario(), path, redactor, end, progress).map(|()| None)
        }
        None => {
            let what = if verifying {
                "nothing verified"
            } else {
                "no cassette written"
            };
            progress(&format!(
                "{what}: the scenario started no agent, so nothing was recorded ({} is \
                 unchanged)",
                display_path(path)
            ));
            Ok(None)
        }
    };
    checked.and(ended.map_err(|error| error.redacted(redactor)))
}

/// Compares what `relay` recorded in memory (and the run's `verdict`) with the cassette at
/// `path`, says so through `progress`, and returns the line for the report; drift fails only
/// when `strict` (`LIVE_STRICT=1`: a live model's run is a sample, drift is news, not a verdict).
pub(super) fn verify(
    relay: &Relay,
    scenario: &str,
    path: &Path,
    verdict: &Verdict,
    strict: bool,
    progress: &dyn Fn(&str),
) -> Result<Option<String>, CassetteError> {
    let cassette = load(path, scenario)?;
    let recorded_verdict = cassette.provenance.as_ref().map(|p| &p.verdict);
    let found = drift(
        recorded_verdict,
        &cassette.interactions,
        verdict,
        &relay.interactions(),
    );
    let shown = display_path(path);
    let unknown = if recorded_verdict.is_none() {
        "; its verdict not compared: provenance unknown (recorded before cassettes kept it)"
    } else {
        ""
    };
    if found.is_empty() {
        let line = format!("verify: no drift from {shown}{unknown}");
        progress(&line);
        return Ok(Some(line));
    }
    let line = format!("drift from {shown}: {}{unknown}", found.join("; "));
    progress(&line);
    if strict {
        return Err(CassetteError::Drift {
            path: shown,
            drift: found.join("; "),
            command: rerecord_command(scenario),
        });
    }
    Ok(Some(line))
}

/// Writes what `relay` recorded for `scenario` to `path` with its provenance, or beside it as
/// pending when the run did not pass or skip.
fn write(
    relay: &Relay,
    scenario: &str,
    path: &Path,
    redactor: &Redactor,
    end: RunEnd,
    progress: &dyn Fn(&str),
) -> Result<(), CassetteError> {
    // A recording of the wrong API, or of failed handshakes, is no recording of the model.
    let problems = relay.problems();
    if !problems.is_empty() {
        return Err(CassetteError::Upstream(format!(
            "no cassette written ({} is unchanged): {}",
            display_path(path),
            problems.join("; ")
        )));
    }
    let passed = end.verdict != Verdict::Failed;
    let recorded = relay.upstream().recorded.clone();
    let interactions = relay.interactions();
    let provenance = provenance(&recorded.model, end.opencode, &interactions, end.verdict);
    let recorded = Cassette {
        format: FORMAT,
        scenario: scenario.to_owned(),
        recorded,
        provenance: Some(provenance),
        interactions,
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
        WireApi::OpenAi | WireApi::Responses | WireApi::Anthropic => model.base_url(),
        WireApi::Ollama => format!("{}/api", model.ollama_url()),
        WireApi::Gemini => format!("{}/v1beta", model.ollama_url()),
    }
}
