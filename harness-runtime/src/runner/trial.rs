//! One scenario as one libtest-mimic trial: requirements, its own runtime, a ceiling, cleanup.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

use super::admission::{self, Admission};
use super::descriptor::Scenario;
use super::panic::{self as panics, RedactorCell};
use super::report_hook::TrialReport;
use super::setup::{
    CollectingGuard, DEFAULT_CEILING, FINISH_CEILING, SHUTDOWN_CEILING, runtime, timeout_message,
};
use crate::cassette::Resolution;
use crate::live::ScenarioInfo;
use crate::progress::{progress, seconds};
use crate::{Live, settings};

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
/// from one `admission` (requirements per model plan).
pub(crate) fn trial(scenario: &'static Scenario, mode: Mode) -> Trial {
    let flagged = (mode.list || mode.ignored)
        && (scenario.options.ignore.is_some()
            || matches!(admission::admit(scenario, mode.strict), Admission::Skip(_)));
    Trial::ignorable_test(scenario.name(), move || {
        let report = TrialReport::begin();
        let result = run(scenario, mode, &report);
        let ignored = scenario.options.ignore.is_some() && !mode.run_ignored;
        report.end(scenario, ignored, &result);
        result
    })
    .with_ignored_flag(flagged)
}

fn run(
    scenario: &'static Scenario,
    mode: Mode,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let name = scenario.name();
    if let Some(reason) = scenario.options.ignore {
        if !mode.run_ignored {
            return Ok(Completion::ignored_with(reason));
        }
    }
    match admission::admit(scenario, mode.strict) {
        Admission::Run(resolution) if scenario.options.explore.is_some() => {
            super::explore::execute(scenario, name, &resolution, report)
        }
        Admission::Run(resolution) => execute(scenario, name, &resolution, report),
        // A missing requirement under LIVE_STRICT, recording without the real model, replaying
        // without a cassette.
        Admission::Fail(message) => Err(message.into()),
        Admission::Skip(reason) => {
            progress(&name, &format!("skipped: {reason}"));
            Ok(Completion::ignored_with(reason))
        }
    }
}

/// Runs the body under its ceiling on a fresh runtime, then always `Live::finish`.
fn execute(
    scenario: &'static Scenario,
    name: String,
    resolution: &Resolution,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let started = Instant::now();
    let cell = RedactorCell::default();
    let _panics = panics::redact_on_this_thread(cell.clone());
    let _collecting = CollectingGuard::install(report.collector());
    let runtime = runtime(&cell, report.collector()).map_err(|e| {
        Failed::from(format!(
            "could not start the tokio runtime of `{name}`: {e}"
        ))
    })?;
    let mut live = {
        let _context = runtime.enter();
        Live::new(ScenarioInfo {
            name: name.clone(),
            options: scenario.options,
            manifest_dir: PathBuf::from(scenario.manifest_dir),
            snapshot_assertion: scenario.snapshot_assertion,
        })
    };
    let redactor = Arc::clone(live.redactor());
    panics::use_redactor(&cell, Arc::clone(&redactor));
    progress(&name, "started");
    // `cassette` scenarios say which model they talk to (replay, record, live, and why).
    if let Some(line) = resolution.progress_line() {
        progress(&name, &line);
    }

    let ceiling = settings::scaled(scenario.options.timeout.unwrap_or(DEFAULT_CEILING));
    // The body is not `Send`: `block_on` drives it on this thread, the workers serve its tasks.
    let body = catch_unwind(AssertUnwindSafe(|| {
        // The timer is created inside `block_on`: it needs the runtime's context.
        runtime.block_on(async { tokio::time::timeout(ceiling, (scenario.body)(&mut live)).await })
    }));
    // What the scenario produced is redacted; the runner's own words are not: the ceiling in a
    // timeout message is configuration, and redacting it (`[duration]`) would hide the one
    // number the reader needs.
    let redact = |text: String| redactor.redact(&text);
    let failure = match body {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(failed))) => Some(redact(failed.into_message())),
        Ok(Err(_elapsed)) => Some(timeout_message(scenario, &name, ceiling)),
        Err(payload) => Some(redact(format!("panicked: {}", panics::message(&*payload)))),
    };

    let finish_ceiling = settings::scaled(FINISH_CEILING);
    // A skip is reported as skipped whatever the body returned: a known outcome, so its roots
    // are removed like a pass's (keeping them would leak a temp dir per skip).
    let passed = failure.is_none() || live.skip.is_some();
    let finish = catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async { tokio::time::timeout(finish_ceiling, live.finish(passed)).await })
    }));
    let cleanup = match finish {
        Ok(Ok(Ok(()))) => None,
        // Verdicts on what the scenario did, not failures to clean up after it.
        Ok(Ok(Err(
            verdict @ (crate::live::FinishError::Product(_)
            | crate::live::FinishError::UnreachedGates(_)),
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
    };
    let skip = live.skip.take();
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
        // A missing OpenCode is a missing prerequisite: a failure under CI or LIVE_STRICT=1.
        let decided = skip
            .strict_fails
            .then(|| settings::MissingPrerequisite::decide(skip.reason.clone()));
        if let Some(settings::MissingPrerequisite::Fail(message)) = decided {
            progress(&name, &format!("failed in {elapsed}"));
            return Err(Failed::from(redactor.redact(&message)));
        }
        progress(&name, &format!("skipped in {elapsed}: {}", skip.reason));
        return Ok(Completion::ignored_with(redactor.redact(&skip.reason)));
    }
    let message = match (failure, cleanup) {
        (None, None) => {
            progress(&name, &format!("passed in {elapsed}"));
            return Ok(Completion::Completed);
        }
        (Some(failure), None) => failure,
        (None, Some(cleanup)) => cleanup,
        (Some(failure), Some(cleanup)) => format!("{failure}\n\nthen {cleanup}"),
    };
    progress(&name, &format!("failed in {elapsed}"));
    Err(Failed::from(message))
}
