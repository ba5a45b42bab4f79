//! A verdict over several runs (`passes = "K of N"`) of a scenario that talks to the real model
//! (live or recording): the body runs again, each run on a fresh `Live` (fresh agents, fresh
//! roots), until K runs passed or K can no longer be reached. Replayed or scripted, the model is
//! deterministic and the trial runs once (`trial::execute`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libtest_mimic::{Completion, Failed};

use super::descriptor::Scenario;
use super::report_hook::TrialReport;
use super::setup::{self, DEFAULT_CEILING, SHUTDOWN_CEILING};
use crate::cassette::{ModelPlan, Resolution};
use crate::live::{RunSetup, Skip};
use crate::progress::{progress, seconds};
use crate::report::{VerdictRecord, VerdictRun};
use crate::scenario::Passes;
use crate::settings;
use crate::timeline::{Lane, note};

/// Whether `passes` decides this trial over several runs: only a real model is a sample.
pub(super) fn samples(scenario: &Scenario, resolution: &Resolution) -> bool {
    scenario.options.passes.is_some() && crate::budget::is_live_model(&resolution.plan)
}

/// Says why a `passes` scenario runs once: its model is deterministic here.
pub(super) fn note_single_run(scenario: &Scenario, name: &str, resolution: &Resolution) {
    let Some(passes) = scenario.options.passes else {
        return;
    };
    let model = match resolution.plan {
        ModelPlan::Replay { .. } => "replayed from its cassette",
        _ => "scripted",
    };
    progress(
        name,
        &format!(
            "passes = \"{} of {}\" samples a real model; {model}, one run decides",
            passes.needed, passes.runs
        ),
    );
}

/// The trial of a scenario that samples a real model.
pub(super) fn execute(
    scenario: &'static Scenario,
    name: String,
    resolution: &Resolution,
    pool: &Arc<crate::opencode::SharedPool>,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let passes = scenario.options.passes.expect("a verdict trial has passes");
    let started = Instant::now();
    let (cell, _guards, runtime) = setup::start(&name, report.collector())?;
    progress(&name, "started");
    if let Some(line) = resolution.progress_line() {
        progress(&name, &line);
    }
    progress(
        &name,
        &format!(
            "deciding over at most {} runs: {} must pass",
            passes.runs, passes.needed
        ),
    );
    let cassette = KeptCassette::before(resolution);
    let ceiling = settings::scaled(scenario.options.timeout.unwrap_or(DEFAULT_CEILING));
    let mut tally = Tally::new(passes);
    let mut runs: Vec<VerdictRun> = Vec::new();
    let mut skip: Option<(Skip, Arc<crate::redact::Redactor>)> = None;
    let mut stopped: Option<String> = None;
    while tally.undecided() {
        let number = tally.runs() + 1;
        // The run-level ceiling (`LIVE_RUN_MAX_*`) may be spent by this verdict's own runs.
        if number > 1
            && let Err(reason) = crate::budget::admit_live(&name)
        {
            stopped = Some(reason);
            break;
        }
        note(Lane::Provisioning, "verdict run", || {
            format!("run {number} of at most {}", passes.runs)
        });
        let run_started = Instant::now();
        let run = RunSetup {
            // The plan the trial was admitted with, for every run: under `LIVE_CASSETTE=missing`
            // a passing run's cassette must not turn the next run into a replay.
            plan: Some(resolution.plan.clone()),
            repeated: number > 1,
            explore: None,
            relay_env: None,
        };
        let mut live = setup::new_live(&runtime, scenario, &name, pool, run);
        let redactor = Arc::clone(live.redactor());
        super::panic::use_redactor(&cell, Arc::clone(&redactor));
        let failure = setup::run_body(&runtime, scenario, &mut live, ceiling, || None);
        let passed = failure.is_none() || live.is_skipped();
        let cleanup = setup::finish(&runtime, &mut live, passed);
        let failure = setup::with_cleanup(failure, cleanup);
        let elapsed = run_started.elapsed();
        report.ran(&live, resolution);
        let run_skip = live.take_skip();
        {
            // The slots' `Drop` fallbacks may need the runtime's context.
            let _context = runtime.enter();
            drop(live);
        }
        let at = format!("run {number} of at most {}", passes.runs);
        if let Some(run_skip) = run_skip {
            // A skip is a missing prerequisite (no OpenCode, a capability the model lacks):
            // every later run would meet it too, so the scenario is skipped.
            progress(
                &name,
                &format!(
                    "{at}: skipped: {}; the verdict ends here",
                    redactor.redact(&run_skip.reason)
                ),
            );
            runs.push(VerdictRun {
                outcome: "skipped".to_owned(),
                duration_ms: elapsed.as_millis() as u64,
                failure: Some(run_skip.reason.clone()),
            });
            skip = Some((run_skip, redactor));
            break;
        }
        tally.add(failure.is_none());
        let line = match &failure {
            None => format!("{at}: passed in {}", seconds(elapsed)),
            Some(failure) => format!(
                "{at}: failed in {}: {}",
                seconds(elapsed),
                failure.lines().next().unwrap_or_default()
            ),
        };
        progress(&name, &line);
        runs.push(VerdictRun {
            outcome: if failure.is_none() {
                "passed"
            } else {
                "failed"
            }
            .to_owned(),
            duration_ms: elapsed.as_millis() as u64,
            failure,
        });
    }
    runtime.shutdown_timeout(settings::scaled(SHUTDOWN_CEILING));
    let summary = tally.summary();
    report.decided(VerdictRecord {
        needed: passes.needed,
        max_runs: passes.runs,
        summary: summary.clone(),
        runs: runs.clone(),
    });
    let elapsed = seconds(started.elapsed());
    if let Some((skip, redactor)) = skip {
        return setup::skipped(&name, &elapsed, &skip, &|text| redactor.redact(text));
    }
    if let Some(reason) = stopped {
        let message = format!(
            "{reason}: the verdict stopped undecided after {summary}\n{}",
            describe(&runs)
        );
        cassette.restore_unless(false, &name);
        if settings::strict() {
            progress(&name, &format!("failed in {elapsed}"));
            return Err(Failed::from(format!(
                "{message}\n(LIVE_STRICT=1 makes a scenario the ceiling kept from running a \
                 failure)"
            )));
        }
        progress(&name, &format!("skipped in {elapsed}: {reason}"));
        return Ok(Completion::ignored_with(message));
    }
    cassette.restore_unless(tally.passed(), &name);
    if tally.passed() {
        progress(&name, &format!("passed in {elapsed}: {summary}"));
        return Ok(Completion::Completed);
    }
    progress(&name, &format!("failed in {elapsed}: {summary}"));
    Err(Failed::from(format!(
        "`{name}` failed its verdict: {summary}; {} passes can no longer be reached\n{}",
        passes.needed,
        describe(&runs)
    )))
}

/// Each run's outcome on a line of its own, its failure indented below it (already redacted by
/// its run).
fn describe(runs: &[VerdictRun]) -> String {
    let mut text = String::new();
    for (index, run) in runs.iter().enumerate() {
        let took = seconds(Duration::from_millis(run.duration_ms));
        text.push_str(&format!("\nrun {}: {} in {took}", index + 1, run.outcome));
        if let Some(failure) = &run.failure {
            text.push(':');
            for line in failure.lines() {
                text.push_str("\n    ");
                text.push_str(line);
            }
        }
    }
    text
}

/// The cassette as it was before a recording verdict: every passing run writes it (and removes
/// the `.pending` of an earlier failed run), so a verdict that does not pass puts it back, and
/// the pending recording of its last, failed run stays beside it, as after any failed recording.
struct KeptCassette {
    /// The cassette's path and its bytes before the verdict (`None`: there was none); nothing
    /// when no run writes it (live, or `LIVE_CASSETTE=verify`, which compares only).
    before: Option<(PathBuf, Option<Vec<u8>>)>,
}

impl KeptCassette {
    fn before(resolution: &Resolution) -> Self {
        let before = match &resolution.plan {
            ModelPlan::Record { path } if !resolution.is_verify() => {
                Some((path.clone(), std::fs::read(path).ok()))
            }
            _ => None,
        };
        KeptCassette { before }
    }

    /// Puts the cassette back unless the verdict `passed`, saying so when it changed.
    fn restore_unless(&self, passed: bool, name: &str) {
        let Some((path, before)) = &self.before else {
            return;
        };
        if passed {
            return;
        }
        let now = std::fs::read(path).ok();
        if &now == before {
            return;
        }
        let shown = shown(path);
        let restored = match before {
            Some(bytes) => std::fs::write(path, bytes),
            None => std::fs::remove_file(path),
        };
        match restored {
            Ok(()) => progress(
                name,
                &format!(
                    "the verdict did not pass: a passing run's recording is not kept ({shown} \
                     is as before the verdict; the last failed run's is beside it, .pending)"
                ),
            ),
            Err(e) => progress(
                name,
                &format!(
                    "the verdict did not pass, but {shown} could not be put back as it was \
                     ({e}): it holds a passing run's recording; restore it from version control"
                ),
            ),
        }
    }
}

/// `path` relative to the working directory when below it (as the cassette lines show it).
fn shown(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    path.strip_prefix(&cwd)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The count of a verdict: how many runs ran and passed, and whether it is decided.
#[derive(Clone, Copy, Debug)]
struct Tally {
    passes: Passes,
    runs: u32,
    passed: u32,
}

impl Tally {
    fn new(passes: Passes) -> Self {
        Tally {
            passes,
            runs: 0,
            passed: 0,
        }
    }

    fn add(&mut self, passed: bool) {
        self.runs += 1;
        self.passed += u32::from(passed);
    }

    fn runs(&self) -> u32 {
        self.runs
    }

    /// K runs passed.
    fn passed(&self) -> bool {
        self.passed >= self.passes.needed
    }

    /// Even if every run left passed, K would not be reached.
    fn unreachable(&self) -> bool {
        self.passed + (self.passes.runs - self.runs) < self.passes.needed
    }

    fn undecided(&self) -> bool {
        !self.passed() && !self.unreachable()
    }

    /// `3 of 4 passed (3 of 5 needed)`.
    fn summary(&self) -> String {
        format!(
            "{} of {} passed ({} of {} needed)",
            self.passed, self.runs, self.passes.needed, self.passes.runs
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs a verdict takes for `outcomes` (one per run, `true` passed), and its result.
    fn decide(needed: u32, runs: u32, outcomes: &[bool]) -> (u32, bool, String) {
        let mut tally = Tally::new(Passes { needed, runs });
        let mut outcomes = outcomes.iter();
        while tally.undecided() {
            tally.add(*outcomes.next().expect("the verdict wanted another run"));
        }
        (tally.runs(), tally.passed(), tally.summary())
    }

    #[test]
    fn stops_as_soon_as_k_passed() {
        assert_eq!(
            decide(3, 5, &[true, false, true, true, true]),
            (4, true, "3 of 4 passed (3 of 5 needed)".to_owned())
        );
        assert_eq!(decide(1, 5, &[true]).0, 1);
        assert_eq!(decide(3, 3, &[true, true, true]).0, 3);
    }

    #[test]
    fn stops_as_soon_as_k_is_out_of_reach() {
        assert_eq!(
            decide(3, 5, &[false, true, false, false]),
            (4, false, "1 of 4 passed (3 of 5 needed)".to_owned())
        );
        // All must pass: the first failure decides.
        assert_eq!(
            decide(5, 5, &[true, false]),
            (2, false, "1 of 2 passed (5 of 5 needed)".to_owned())
        );
        assert_eq!(decide(1, 3, &[false, false, false]).0, 3);
    }

    #[test]
    fn the_message_lists_each_run_and_indents_its_failure() {
        let runs = [
            VerdictRun {
                outcome: "passed".into(),
                duration_ms: 1500,
                failure: None,
            },
            VerdictRun {
                outcome: "failed".into(),
                duration_ms: 250,
                failure: Some("wrong word\nsaid: no".into()),
            },
        ];
        assert_eq!(
            describe(&runs),
            "\nrun 1: passed in 1.500s\nrun 2: failed in 0.250s:\n    wrong word\n    said: no"
        );
    }
}
