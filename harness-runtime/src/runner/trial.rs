//! One scenario as one libtest-mimic trial: requirements, its own runtime, a ceiling, cleanup.

use std::sync::Arc;
use std::time::Instant;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use super::admission::{self, Admission};
use super::descriptor::Scenario;
use super::panic as panics;
use super::report_hook::TrialReport;
use super::setup::{self, DEFAULT_CEILING, SHUTDOWN_CEILING};
use crate::cassette::Resolution;
use crate::live::RunSetup;
use crate::opencode::SharedPool;
use crate::progress::{progress, seconds};
use crate::settings;

/// What the command line and environment decide for every trial.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Mode {
    /// `--list`: ignored-ness must be decided now, for nextest.
    list: bool,
    /// `--ignored`: only trials flagged ignored are kept, so flag them to keep them.
    ignored: bool,
    /// `--ignored` or `--include-ignored`: `ignore = "…"` scenarios run.
    run_ignored: bool,
    /// `LIVE_STRICT=1`: unmet requirements fail.
    strict: bool,
}

impl Mode {
    pub(crate) fn from_args(args: &Arguments) -> Self {
        Mode {
            list: args.list,
            ignored: args.ignored,
            run_ignored: args.ignored || args.include_ignored,
            strict: settings::strict(),
        }
    }
}

/// The trial of `scenario`.
///
/// Skips are reported at run time with their reason (`ignored, requires X: X is not set`);
/// when listing (and under `--ignored`) the same scenarios are flagged ignored up front, so
/// nextest, which decides from `--list`, reports them as skipped rather than passed. Both come
/// from one `admission` (requirements per model plan), and from `peers` for a scenario that
/// needs a peer in its process. A skip that only the run finds is for `skips` to show nextest.
/// Its agents share the servers of `pool`, the run's.
pub(crate) fn trial(scenario: &'static Scenario, mode: Mode, pool: Arc<SharedPool>) -> Trial {
    let flagged = (mode.list || mode.ignored)
        && (scenario.options.ignore.is_some()
            || super::peers::listed_ignored(scenario)
            || matches!(admission::admit(scenario, mode.strict), Admission::Skip(_)));
    Trial::ignorable_test(scenario.name(), move || {
        let report = TrialReport::begin();
        let result = run(scenario, mode, &pool, &report);
        let ignored = scenario.options.ignore.is_some() && !mode.run_ignored;
        let result = super::skips::settle(&scenario.name(), result, ignored);
        report.end(scenario, ignored, &result);
        result
    })
    .with_ignored_flag(flagged)
}

fn run(
    scenario: &'static Scenario,
    mode: Mode,
    pool: &Arc<SharedPool>,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let name = scenario.name();
    if let Some(reason) = scenario.options.ignore {
        if !mode.run_ignored {
            return Ok(Completion::ignored_with(reason));
        }
    }
    // A peer that cannot be in this run (nextest's process per test, filtered out): no wait.
    if let Some(reason) = super::peers::absent(&name) {
        progress(&name, &format!("skipped: {reason}"));
        return Ok(Completion::ignored_with(reason));
    }
    let admission = admission::admit(scenario, mode.strict);
    // One live-model slot (`LIVE_MODEL_CONCURRENCY`) for the scenario's whole run, every run of
    // its body included; taken before its ceiling starts.
    let slot = match &admission {
        Admission::Run(resolution) => super::live_slots::take(&resolution.plan, &name),
        _ => None,
    };
    if slot.is_some() {
        // The report's duration, too, is the scenario's own time.
        report.restart_clock();
    }
    let admission = within_run_ceiling(admission, &name, mode.strict);
    match admission {
        Admission::Run(resolution) if scenario.options.explore.is_some() => {
            super::explore::execute(scenario, name, &resolution, pool, report)
        }
        Admission::Run(resolution) if super::verdict::samples(scenario, &resolution) => {
            super::verdict::execute(scenario, name, &resolution, pool, report)
        }
        Admission::Run(resolution) => {
            super::verdict::note_single_run(scenario, &name, &resolution);
            execute(scenario, name, &resolution, pool, report)
        }
        // A missing requirement under LIVE_STRICT, recording without the real model, replaying
        // without a cassette.
        Admission::Fail(message) => Err(message.into()),
        Admission::Skip(reason) => {
            progress(&name, &format!("skipped: {reason}"));
            Ok(Completion::ignored_with(reason))
        }
    }
}

/// `admission`, unless the scenario talks to the real model and the run's live-model ceiling
/// (`LIVE_RUN_MAX_TOKENS`, `LIVE_RUN_MAX_COST`) is spent: then skipped (failed under
/// `LIVE_STRICT=1`) with the ceiling and the spend. Decided once it has its live-model slot, so
/// what the scenarios before it spent counts.
fn within_run_ceiling(admission: Admission, name: &str, strict: bool) -> Admission {
    let live = matches!(&admission, Admission::Run(r) if crate::budget::is_live_model(&r.plan));
    if !live {
        return admission;
    }
    ceiling_verdict(crate::budget::admit_live(name), strict).unwrap_or(admission)
}

/// What the run's ceiling decides for a live-model scenario: nothing while it admits it, else
/// skipped with its reason, or failed under `LIVE_STRICT=1`.
fn ceiling_verdict(admitted: Result<(), String>, strict: bool) -> Option<Admission> {
    let reason = admitted.err()?;
    Some(if strict {
        Admission::Fail(format!(
            "{reason} (LIVE_STRICT=1 makes a scenario the ceiling kept from running a failure)"
        ))
    } else {
        Admission::Skip(reason)
    })
}

/// Runs the body under its ceiling on a fresh runtime, then always `Live::finish`.
fn execute(
    scenario: &'static Scenario,
    name: String,
    resolution: &Resolution,
    pool: &Arc<SharedPool>,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let started = Instant::now();
    let (cell, _guards, runtime) = setup::start(&name, report.collector())?;
    let mut live = setup::new_live(&runtime, scenario, &name, pool, RunSetup::default());
    let redactor = Arc::clone(live.redactor());
    panics::use_redactor(&cell, Arc::clone(&redactor));
    progress(&name, "started");
    // `cassette` scenarios say which model they talk to (replay, record, live, and why).
    if let Some(line) = resolution.progress_line() {
        progress(&name, &line);
    }

    let ceiling = settings::scaled(scenario.options.timeout.unwrap_or(DEFAULT_CEILING));
    let failure = setup::run_body(&runtime, scenario, &mut live, ceiling, || None);
    // A skip is reported as skipped whatever the body returned: a known outcome, so its roots
    // are removed like a pass's (keeping them would leak a temp dir per skip).
    let passed = failure.is_none() || live.is_skipped();
    let cleanup = setup::finish(&runtime, &mut live, passed);
    let skip = live.take_skip();
    report.ran(&live, resolution);
    {
        // The slots' `Drop` fallbacks may need the runtime's context.
        let _context = runtime.enter();
        drop(live);
    }
    runtime.shutdown_timeout(settings::scaled(SHUTDOWN_CEILING));

    let elapsed = seconds(started.elapsed());
    // A skip decided during the body (`live.skip`, a missing OpenCode) outranks the `Err` the
    // body returned to get out, but not a failed cleanup.
    if let (Some(skip), None) = (&skip, &cleanup) {
        return setup::skipped(&name, &elapsed, skip, &|text| redactor.redact(text));
    }
    let Some(message) = setup::with_cleanup(failure, cleanup) else {
        progress(&name, &format!("passed in {elapsed}"));
        return Ok(Completion::Completed);
    };
    progress(&name, &format!("failed in {elapsed}"));
    Err(Failed::from(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_ceiling_skips_a_live_model_scenario_and_fails_it_under_strict() {
        assert_eq!(ceiling_verdict(Ok(()), true), None);
        let spent = || Err("not started: the ceiling is spent".to_owned());
        assert_eq!(
            ceiling_verdict(spent(), false),
            Some(Admission::Skip("not started: the ceiling is spent".into()))
        );
        assert_eq!(
            ceiling_verdict(spent(), true),
            Some(Admission::Fail(
                "not started: the ceiling is spent (LIVE_STRICT=1 makes a scenario the ceiling \
                 kept from running a failure)"
                    .into()
            ))
        );
    }
}
