//! What every trial does the same way, one run of its body or many: its runtime and threads,
//! its ceilings, running a body and ending it, and the verdict of a skip.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use libtest_mimic::{Completion, Failed};

use super::descriptor::Scenario;
use super::panic::{self as panics, RedactorCell};
use crate::live::{FinishError, RunSetup, Skip};
use crate::opencode::SharedPool;
use crate::progress::progress;
use crate::{Live, settings};

/// The scenario ceiling when the attribute gives none ("clearly stuck", before scaling).
pub(super) const DEFAULT_CEILING: Duration = Duration::from_secs(300);
/// The ceiling of `Live::finish` (stopping agents, reporting the model), before scaling.
const FINISH_CEILING: Duration = Duration::from_secs(60);
/// How long dropping the runtime waits for blocking tasks, before scaling.
pub(super) const SHUTDOWN_CEILING: Duration = Duration::from_secs(10);

/// What a trial's thread carries until the trial ends: panics redacted with the scenario's
/// redactor, the run report's timeline collecting.
pub(super) struct TrialGuards {
    _panics: panics::ThreadGuard,
    _collecting: CollectingGuard,
}

/// Starts a trial: its redactor cell (each run of its body puts its redactor there), the
/// guards of its thread and its runtime.
pub(super) fn start(
    name: &str,
    collector: Option<Arc<crate::timeline::Collector>>,
) -> Result<(RedactorCell, TrialGuards, tokio::runtime::Runtime), Failed> {
    let cell = RedactorCell::default();
    let guards = TrialGuards {
        _panics: panics::redact_on_this_thread(cell.clone()),
        _collecting: CollectingGuard::install(collector.clone()),
    };
    let runtime = runtime(&cell, collector).map_err(|e| {
        Failed::from(format!(
            "could not start the tokio runtime of `{name}`: {e}"
        ))
    })?;
    Ok((cell, guards, runtime))
}

/// Why a run failed, from its body's failure and its cleanup's: both when both failed.
pub(super) fn with_cleanup(failure: Option<String>, cleanup: Option<String>) -> Option<String> {
    match (failure, cleanup) {
        (None, None) => None,
        (Some(failure), None) | (None, Some(failure)) => Some(failure),
        (Some(failure), Some(cleanup)) => Some(format!("{failure}\n\nthen {cleanup}")),
    }
}

/// A fresh `Live` for one run of `scenario`'s body, set up as `run` says, made inside
/// `runtime` (its model and servers start on it), sharing the run's `pool`.
pub(super) fn new_live(
    runtime: &tokio::runtime::Runtime,
    scenario: &'static Scenario,
    name: &str,
    pool: &Arc<SharedPool>,
    run: RunSetup,
) -> Live {
    let _context = runtime.enter();
    let info = crate::live::ScenarioInfo {
        name: name.to_owned(),
        options: scenario.options,
        manifest_dir: std::path::PathBuf::from(scenario.manifest_dir),
        snapshot_assertion: scenario.snapshot_assertion,
    };
    Live::for_run(info, pool.clone(), run)
}

/// Runs `scenario`'s body on `live` under `ceiling`: why it failed, redacted, if it did. A
/// run that hit its ceiling says so, with `on_timeout`'s words when it has some.
pub(super) fn run_body(
    runtime: &tokio::runtime::Runtime,
    scenario: &Scenario,
    live: &mut Live,
    ceiling: Duration,
    on_timeout: impl FnOnce() -> Option<String>,
) -> Option<String> {
    let redactor = Arc::clone(live.redactor());
    let name = live.name().to_owned();
    // The body is not `Send`: `block_on` drives it on this thread, the workers serve its tasks.
    let body = catch_unwind(AssertUnwindSafe(|| {
        // The timer is created inside `block_on`: it needs the runtime's context.
        runtime.block_on(async { tokio::time::timeout(ceiling, (scenario.body)(live)).await })
    }));
    // What the scenario produced is redacted; the runner's own words are not: the ceiling in a
    // timeout message is configuration, and redacting it (`[duration]`) would hide the one
    // number the reader needs.
    let redact = |text: String| redactor.redact(&text);
    match body {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(failed))) => Some(redact(failed.into_message())),
        Ok(Err(_elapsed)) => {
            let message = timeout_message(scenario, &name, ceiling);
            Some(match on_timeout() {
                Some(more) => format!("{message} ({})", redact(more)),
                None => message,
            })
        }
        Err(payload) => Some(redact(format!("panicked: {}", panics::message(&*payload)))),
    }
}

/// Ends `live` under its ceiling (`Live::finish`; `passed` removes its roots): what ending it
/// found, redacted, if anything.
pub(super) fn finish(
    runtime: &tokio::runtime::Runtime,
    live: &mut Live,
    passed: bool,
) -> Option<String> {
    let redactor = Arc::clone(live.redactor());
    let redact = |text: String| redactor.redact(&text);
    let finish_ceiling = settings::scaled(FINISH_CEILING);
    let finish = catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async { tokio::time::timeout(finish_ceiling, live.finish(passed)).await })
    }));
    match finish {
        Ok(Ok(Ok(()))) => None,
        // The budget's figures and limits are the verdict: numbers and option names only, the
        // runner's own words, so not redacted (that would make every duration `[duration]`).
        Ok(Ok(Err(FinishError::Budget(breaches)))) => Some(breaches),
        // Verdicts on what the scenario did, not failures to clean up after it.
        Ok(Ok(Err(
            verdict @ (FinishError::Product(_)
            | FinishError::UnreachedGates(_)
            | FinishError::Upstream(_)),
        ))) => Some(redact(verdict.to_string())),
        Ok(Ok(Err(message))) => Some(redact(format!("cleanup failed: {message}"))),
        Ok(Err(_elapsed)) => Some(format!(
            "cleanup did not finish within {}: agents may still be stopping; \
             set LIVE_TIMEOUT_SCALE=2 on a slow machine",
            humantime::format_duration(finish_ceiling)
        )),
        Err(payload) => Some(redact(format!(
            "cleanup panicked: {}",
            panics::message(&*payload)
        ))),
    }
}

/// The verdict of a trial that ended as skipped after `elapsed`: skipped with its reason, or,
/// for a missing prerequisite under `CI` or `LIVE_STRICT=1`, failed.
pub(super) fn skipped(
    name: &str,
    elapsed: &str,
    skip: &Skip,
    redact: &dyn Fn(&str) -> String,
) -> Result<Completion, Failed> {
    let decided = skip
        .strict_fails
        .then(|| settings::MissingPrerequisite::decide(skip.reason.clone()));
    if let Some(settings::MissingPrerequisite::Fail(message)) = decided {
        progress(name, &format!("failed in {elapsed}"));
        return Err(Failed::from(redact(&message)));
    }
    progress(name, &format!("skipped in {elapsed}: {}", skip.reason));
    Ok(Completion::ignored_with(redact(&skip.reason)))
}

/// A runtime per trial: a scenario cannot starve or poison another one's tasks.
fn runtime(
    cell: &RedactorCell,
    collector: Option<Arc<crate::timeline::Collector>>,
) -> std::io::Result<tokio::runtime::Runtime> {
    let on_start = cell.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("live-scenario-worker")
        .on_thread_start(move || {
            panics::set_for_this_thread(Some(on_start.clone()));
            crate::timeline::install_on_this_thread(collector.clone());
        })
        .on_thread_stop(|| {
            panics::set_for_this_thread(None);
            crate::timeline::install_on_this_thread(None);
        })
        .build()
}

/// The run report's collector on the trial thread, until the trial ends.
struct CollectingGuard;

impl CollectingGuard {
    fn install(collector: Option<Arc<crate::timeline::Collector>>) -> Self {
        crate::timeline::install_on_this_thread(collector);
        CollectingGuard
    }
}

impl Drop for CollectingGuard {
    fn drop(&mut self) {
        crate::timeline::install_on_this_thread(None);
    }
}

fn timeout_message(scenario: &Scenario, name: &str, ceiling: Duration) -> String {
    let source = match scenario.options.timeout {
        Some(timeout) => format!("timeout = \"{}\"", humantime::format_duration(timeout)),
        None => format!(
            "the default of {}",
            humantime::format_duration(DEFAULT_CEILING)
        ),
    };
    let scale = settings::timeout_scale().unwrap_or(1.0);
    format!(
        "`{name}` timed out: it did not finish within its ceiling of {} ({source} × {}={scale}); \
         if it is only slow, raise `timeout` in its #[live_agent_test(...)] or set \
         {}=2 on a slow machine",
        humantime::format_duration(ceiling),
        settings::TIMEOUT_SCALE,
        settings::TIMEOUT_SCALE,
    )
}
