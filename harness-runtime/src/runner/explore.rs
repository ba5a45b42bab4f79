//! An exploring scenario's trial (`explore = N`): the body runs again and again, each run on a
//! fresh `Live` under another schedule of its products' traffic, until the budget is spent or a
//! run fails; a failure is shrunk, confirmed, and reported with the line that replays it.
//! `LIVE_SCHEDULE` replays one schedule once instead.

use std::sync::Arc;
use std::time::{Duration, Instant};

use libtest_mimic::{Completion, Failed};

use super::descriptor::Scenario;
use super::panic::{self as panics, RedactorCell};
use super::report_hook::TrialReport;
use super::setup::{self, DEFAULT_CEILING, SHUTDOWN_CEILING};
use crate::cassette::Resolution;
use crate::evidence::Baseline;
use crate::explore::explorer::{self, Budget, Exploration, Progress, Purpose, RunResult};
use crate::explore::{Focus, Plan, Point, RunRecord, Schedule, Scheduler};
use crate::gates::WirePoint;
use crate::live::{RunSetup, Skip};
use crate::progress::{progress, seconds};
use crate::report::{DiagramStep, ExplorationRecord};
use crate::scenario::ExploreOptions;
use crate::{Live, settings};

/// How often a long search says how far it got.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The trial of an exploring scenario.
pub(super) fn execute(
    scenario: &'static Scenario,
    name: String,
    resolution: &Resolution,
    pool: &Arc<crate::opencode::SharedPool>,
    report: &TrialReport,
) -> Result<Completion, Failed> {
    let options = scenario
        .options
        .explore
        .expect("an exploring trial has explore options");
    let started = Instant::now();
    let (cell, _guards, runtime) = setup::start(&name, report.collector())?;
    let mut runs = Runs {
        scenario,
        name: &name,
        options,
        runtime: &runtime,
        pool,
        cell: &cell,
        baseline: Arc::new(Baseline::default()),
        ceiling: settings::scaled(scenario.options.timeout.unwrap_or(DEFAULT_CEILING)),
        quiet: settings::explore_quiet(),
        kept: None,
        skip: None,
        runs: 0,
        timeline: report.collector(),
    };
    let verdict = match settings::schedule(Schedule::parse) {
        Some(schedule) => runs.replay(&schedule, report),
        None => runs.explore(report, started),
    };
    if let Some(live) = runs.kept.take() {
        report.ran(&live, resolution);
        let _context = runtime.enter();
        drop(live);
    }
    let skip = runs.skip.take();
    runtime.shutdown_timeout(settings::scaled(SHUTDOWN_CEILING));
    let elapsed = seconds(started.elapsed());
    if let Some(skip) = skip {
        return setup::skipped(&name, &elapsed, &skip, &|text| text.to_owned());
    }
    match verdict {
        Ok(summary) => {
            progress(&name, &format!("passed in {elapsed}: {summary}"));
            Ok(Completion::Completed)
        }
        Err(message) => {
            progress(&name, &format!("failed in {elapsed}"));
            Err(Failed::from(message))
        }
    }
}

/// What every run of one exploring trial shares.
struct Runs<'a> {
    scenario: &'static Scenario,
    name: &'a str,
    options: ExploreOptions,
    runtime: &'a tokio::runtime::Runtime,
    /// The run's shared servers.
    pool: &'a Arc<crate::opencode::SharedPool>,
    cell: &'a RedactorCell,
    baseline: Arc<Baseline>,
    /// One run's ceiling.
    ceiling: Duration,
    quiet: Duration,
    /// The run the report shows: the failing run kept with its roots, or the last one.
    kept: Option<Live>,
    /// A run ended as skipped (no OpenCode, a missing prerequisite): the trial is skipped.
    skip: Option<Skip>,
    /// Runs so far.
    runs: u32,
    /// The run report's timeline: each run starts it again, so it shows the run the report
    /// presents (the last).
    timeline: Option<Arc<crate::timeline::Collector>>,
}

impl Runs<'_> {
    /// `LIVE_SCHEDULE`: one run under `schedule`. A run that no longer fits it (a deviation
    /// whose two steps never met) fails, saying which: passing in the default order there proves
    /// nothing about the failure the schedule recorded.
    fn replay(&mut self, schedule: &Schedule, report: &TrialReport) -> Result<String, String> {
        progress(
            self.name,
            &format!("replaying schedule {schedule} (LIVE_SCHEDULE)"),
        );
        let result = self.run(&Plan::Replay(schedule.clone()), true);
        let divergence = explorer::replay_divergence(&result.record);
        let mut record = exploration_record("replay", &result.record);
        record.budget_runs = 1;
        record.runs = 1;
        record.schedules = 1;
        record.failed = result.failure.is_some() || divergence.is_some();
        record.schedule = Some(schedule.to_string());
        record.diverged = divergence.clone();
        record.replay_command = Some(replay_command(
            self.name,
            self.scenario.options.ignore.is_some(),
            schedule,
        ));
        report.explored(record);
        if self.skip.is_some() {
            return Ok(String::new());
        }
        match (result.failure, divergence) {
            (None, None) => Ok(format!(
                "schedule {schedule} passed{}",
                unsettled_note(&result.record)
            )),
            (None, Some(divergence)) => Err(format!(
                "`{}` no longer fits schedule {schedule}: {divergence}; the run took the default \
                 order there and passed, which says nothing about the failure the schedule was \
                 recorded for (did the code change?): explore again (unset LIVE_SCHEDULE)",
                self.name
            )),
            (Some(failure), divergence) => {
                let diverged = divergence
                    .map(|d| {
                        format!(
                            "\n\nthe run no longer fit the schedule ({d}): it took the default order there"
                        )
                    })
                    .unwrap_or_default();
                Err(format!(
                    "`{}` failed under schedule {schedule} (LIVE_SCHEDULE)\n{failure}{diverged}\n\n\
                     decisions of the run:\n{}",
                    self.name,
                    result.record.describe_decisions(40)
                ))
            }
        }
    }

    /// Searches the orderings, then reports.
    fn explore(&mut self, report: &TrialReport, started: Instant) -> Result<String, String> {
        let base = settings::explore_seed().unwrap_or_else(random_seed);
        let seed = explorer::scenario_seed(base, self.name);
        let within = settings::scaled(
            self.options
                .ceiling
                .unwrap_or(ExploreOptions::DEFAULT_CEILING),
        );
        let budget = Budget {
            runs: self.options.runs,
            within,
            confirm: settings::explore_confirm(),
        };
        progress(
            self.name,
            &format!(
                "exploring up to {} schedules within {} (seed {base}; LIVE_EXPLORE_SEED={base} \
                 repeats this search)",
                budget.runs,
                humantime::format_duration(within)
            ),
        );
        let mut last_progress = Instant::now();
        let mut confirms = 0;
        let exploration = {
            let name = self.name;
            explorer::explore(
                budget,
                seed,
                &|| started.elapsed(),
                &mut |plan, purpose| {
                    if self.skip.is_some() {
                        // Everything after a skip is skipped too: pass, so the search ends.
                        return RunResult::default();
                    }
                    // Only the last confirming replay keeps its roots when it fails: the one
                    // the report shows.
                    let keep = purpose == Purpose::Confirm && {
                        confirms += 1;
                        confirms == budget.confirm
                    };
                    let result = self.run(plan, keep);
                    if let (Purpose::Search(n), Some(_)) = (purpose, &result.failure) {
                        progress(
                            name,
                            &format!(
                                "schedule {n} failed ({}): shrinking it",
                                result.record.schedule()
                            ),
                        );
                    }
                    result
                },
                &mut |event| match event {
                    Progress::Searching(exploration) => {
                        if last_progress.elapsed() >= PROGRESS_EVERY
                            || exploration.schedules % 10 == 0
                        {
                            last_progress = Instant::now();
                            progress(
                                name,
                                &format!(
                                    "explored {} schedule{} ({} search), all passed",
                                    exploration.schedules,
                                    if exploration.schedules == 1 { "" } else { "s" },
                                    exploration.mode.name()
                                ),
                            );
                        }
                    }
                    // The schedule the failure will print, as soon as it is known: the confirming
                    // replays take as long as the runs did.
                    Progress::Shrunk {
                        schedule,
                        runs,
                        confirm,
                    } => progress(
                        name,
                        &format!(
                            "shrunk to {schedule} in {runs} run{}{}",
                            if runs == 1 { "" } else { "s" },
                            if confirm == 0 {
                                String::new()
                            } else {
                                format!("; replaying it {confirm} times to confirm")
                            }
                        ),
                    ),
                },
            )
        };
        // People repeat a search with the base seed they were shown, not the scenario's own.
        let mut exploration = exploration;
        exploration.seed = base;
        let mut record = exploration_record(exploration.mode.name(), &exploration.last.record);
        record.seed = Some(base);
        record.budget_runs = budget.runs;
        record.runs = exploration.runs;
        record.schedules = exploration.schedules;
        record.exhausted = exploration.exhausted;
        record.space = exploration
            .exhausted
            .then_some(u64::from(exploration.schedules));
        let verdict = match &exploration.found {
            None if exploration.out_of_time => Ok(format!(
                "{}; the wall-clock budget of {} ended the search",
                exploration.summary(),
                humantime::format_duration(within)
            )),
            None => Ok(exploration.summary()),
            Some(found) => {
                let command = replay_command(
                    self.name,
                    self.scenario.options.ignore.is_some(),
                    &found.schedule,
                );
                record.failed = true;
                record.steps = diagram(&found.run.record);
                record.schedule = Some(found.schedule.to_string());
                record.found = Some(found.first.to_string());
                record.shrink_runs = found.shrink_runs;
                record.reproduced =
                    (found.replays > 0).then_some((found.reproduced, found.replays));
                record.replay_command = Some(command.clone());
                Err(failure_message(self.name, &exploration, budget, &command))
            }
        };
        report.explored(record);
        verdict
    }

    /// One run of the body under `plan` on a fresh context; `keep`: a failing run keeps its
    /// roots (the one the report shows), else it cleans up as a passing one does.
    fn run(&mut self, plan: &Plan, keep: bool) -> RunResult {
        if let Some(timeline) = &self.timeline {
            timeline.restart();
        }
        let scheduler = {
            let _context = self.runtime.enter();
            Scheduler::start_settling(
                plan.strategy(),
                self.quiet,
                focus(self.options.points),
                settings::scaled(crate::explore::SETTLE_CEILING),
            )
        };
        let run = RunSetup {
            plan: None,
            repeated: self.runs > 0,
            explore: Some((scheduler.clone(), self.baseline.clone())),
            relay_env: None,
        };
        let mut live = setup::new_live(self.runtime, self.scenario, self.name, self.pool, run);
        self.runs += 1;
        panics::use_redactor(self.cell, Arc::clone(live.redactor()));
        let failure = setup::run_body(self.runtime, self.scenario, &mut live, self.ceiling, || {
            let held = scheduler.held_labels();
            Some(if held.is_empty() {
                "the scheduler held nothing".to_owned()
            } else {
                format!("the scheduler held: {}", held.join(", "))
            })
        });
        let record = scheduler.record();
        // Only the run the report shows keeps its roots when it fails; the others clean up as
        // a pass does (their failure is in the record).
        let clean_as_passed = failure.is_none() || !keep || live.is_skipped();
        let cleanup = setup::finish(self.runtime, &mut live, clean_as_passed);
        // A passing body's run fails on what ending it found (a product that failed, gates
        // nothing reached); a failing body's already says what went wrong.
        let failure = failure.or(cleanup);
        scheduler.stop();
        if let Some(skip) = live.take_skip() {
            self.skip = Some(skip);
        }
        let previous = self.kept.replace(live);
        {
            // The slots' `Drop` fallbacks may need the runtime's context.
            let _context = self.runtime.enter();
            drop(previous);
        }
        RunResult { failure, record }
    }
}

/// Where the agent had not settled when a step went (the run's order there was the machine's
/// timing, not the schedule's), for a verdict: empty when it always had.
fn unsettled_note(record: &RunRecord) -> String {
    match record.unsettled.as_slice() {
        [] => String::new(),
        [first, rest @ ..] => format!(
            "; {first}{}",
            if rest.is_empty() {
                String::new()
            } else {
                format!(" (and {} more such steps)", rest.len())
            }
        ),
    }
}

/// The decision points `explore_points` names (gate spellings, checked at compile time: an
/// unparsable one is a bug); none named: the default focus.
fn focus(points: &[&str]) -> Focus {
    if points.is_empty() {
        return Focus::all();
    }
    let mut wire = Vec::new();
    let mut products = Vec::new();
    let mut model = false;
    for point in points {
        if *point == harness_opencode_api::spelling::MODEL_POINT {
            model = true;
            continue;
        }
        match point.strip_prefix("product ") {
            Some(name) => products.push(name.trim().to_owned()),
            None => match WirePoint::parse(point) {
                Ok(point) => wire.push(point),
                Err(error) => panic!("invalid `explore_points` spelling: {error}"),
            },
        }
    }
    Focus::only(move |point| match point {
        Point::Request { method, path } => wire
            .iter()
            .any(|w| matches!(w, WirePoint::Request(r) if r.matches(method, path))),
        Point::Response { method, path } => wire
            .iter()
            .any(|w| matches!(w, WirePoint::Response(r) if r.matches(method, path))),
        Point::Event(event_type) => wire
            .iter()
            .any(|w| matches!(w, WirePoint::Event(e) if e.as_str() == *event_type)),
        Point::Product(name) => products.iter().any(|p| p == name),
        Point::Model => model,
    })
}

/// The failure message of an exploration that found a failing schedule.
fn failure_message(name: &str, exploration: &Exploration, budget: Budget, command: &str) -> String {
    let found = exploration
        .found
        .as_ref()
        .expect("a failure message is for a found failure");
    let shrunk = if found.schedule.is_fifo() {
        "; no deviation needed: the default order fails".to_owned()
    } else if found.first == found.schedule {
        String::new()
    } else {
        format!(
            "; shrunk from {} in {} run{}",
            found.first,
            found.shrink_runs,
            if found.shrink_runs == 1 { "" } else { "s" }
        )
    };
    let reproduced = if budget.confirm == 0 {
        "; not replayed: LIVE_EXPLORE_CONFIRM=0".to_owned()
    } else if found.replays == 0 {
        "; not replayed: the wall-clock budget was spent".to_owned()
    } else if found.reproduced == found.replays {
        format!(
            "; reproduced {} of {} replays",
            found.reproduced, found.replays
        )
    } else {
        format!(
            "; reproduced {} of {} replays: the agent does not always behave the same under \
             this schedule",
            found.reproduced, found.replays
        )
    };
    format!(
        "`{name}` failed under schedule {} (found at schedule {} of at most {}, {}, seed \
         {}{shrunk}{reproduced})\n{}\n\ndecisions of the failing run:\n{}\n\nreplay it: {command}",
        found.schedule,
        found.at,
        budget.runs,
        exploration.searched(),
        exploration.seed,
        found.run.failure.as_deref().unwrap_or_default(),
        found.run.record.describe_decisions(40),
    )
}

/// The command that replays `schedule` of the scenario `name` once.
fn replay_command(name: &str, ignored: bool, schedule: &Schedule) -> String {
    let package = settings::cargo_package()
        .map(|p| format!(" -p {p}"))
        .unwrap_or_default();
    // An ignored scenario (a deliberately racy one) runs only when asked for.
    let ignored = if ignored { " --include-ignored" } else { "" };
    format!(
        "LIVE_SCHEDULE='{schedule}' cargo test{package} --test {} -- {name} --exact{ignored}",
        crate::test_target::running()
    )
}

/// A report record of `record`'s run, the rest filled by the caller.
fn exploration_record(mode: &str, record: &RunRecord) -> ExplorationRecord {
    ExplorationRecord {
        mode: mode.to_owned(),
        steps: diagram(record),
        ..ExplorationRecord::default()
    }
}

/// The diagram of a run: its steps in the order they went.
fn diagram(record: &RunRecord) -> Vec<DiagramStep> {
    record
        .released
        .iter()
        .map(|released| DiagramStep {
            kind: released.step.kind.word().to_owned(),
            label: released.step.label.clone(),
            decision: released.decision,
            deviated: released.deviated,
            held: released.held_with.clone(),
            ..DiagramStep::default()
        })
        .collect()
}

/// A base seed when `LIVE_EXPLORE_SEED` is unset: differs per run, and is printed.
fn random_seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        return nanos ^ u64::from(std::process::id());
    }
    // Short enough to type.
    u64::from_le_bytes(bytes) % 1_000_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replay_command_names_the_schedule_the_target_and_the_scenario() {
        let schedule = Schedule::parse("da2a.1>b7c1.1").unwrap();
        let command = replay_command("explore::racy", false, &schedule);
        assert!(
            command.starts_with("LIVE_SCHEDULE='da2a.1>b7c1.1' cargo test"),
            "{command}"
        );
        assert!(
            command.ends_with(" --test harness_runtime -- explore::racy --exact"),
            "{command}"
        );
        let ignored = replay_command("explore::racy", true, &schedule);
        assert!(ignored.ends_with(" --exact --include-ignored"), "{ignored}");
    }
}
