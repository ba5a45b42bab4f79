//! The runner's side of the run report: a timeline per trial (installed on the trial's threads),
//! a record of it when the trial ends, the index regenerated once when the run ends (per process:
//! under nextest every process adds its scenario to the same run's report).

use std::cell::{Cell, RefCell};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use libtest_mimic::{Completion, Failed};

use super::descriptor::Scenario;
use crate::cassette::{ModelPlan, Resolution};
use crate::redact::Redactor;
use crate::report::{self, ExplorationRecord, Outcome, ScenarioRecord, VerdictRecord};
use crate::timeline::Collector;

/// The report folder of this process, `None` when off.
fn dir() -> Option<&'static PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(report::report_dir).as_ref()
}

/// Whether this process wrote a record: a process that ran none (a filter that matched nothing
/// in this test binary) leaves the report as it is.
static WROTE: AtomicBool = AtomicBool::new(false);

/// One trial's part of the report.
pub(crate) struct TrialReport {
    /// When the trial's own time started (after any wait for a live-model slot).
    started: Cell<Instant>,
    collector: Option<Arc<Collector>>,
    ran: RefCell<Option<Ran>>,
    exploration: RefCell<Option<ExplorationRecord>>,
    verdict: RefCell<Option<VerdictRecord>>,
}

/// What only a scenario whose body ran has.
struct Ran {
    redactor: Arc<Redactor>,
    evidence: Vec<(String, serde_json::Value)>,
    model: String,
    /// What its turns spent (budgets, #32).
    usage: Option<report::UsageRecord>,
}

impl TrialReport {
    /// Starts a timeline (none when the report is off: nothing would read it).
    pub(crate) fn begin() -> Self {
        TrialReport {
            started: Cell::new(Instant::now()),
            collector: dir().map(|_| Collector::new()),
            ran: RefCell::new(None),
            exploration: RefCell::new(None),
            verdict: RefCell::new(None),
        }
    }

    /// The trial's time starts now: it waited for a live-model slot, which is not its time.
    pub(crate) fn restart_clock(&self) {
        self.started.set(Instant::now());
    }

    /// The timeline the trial's threads note into.
    pub(crate) fn collector(&self) -> Option<Arc<Collector>> {
        self.collector.clone()
    }

    /// What the body's run adds: the redactor, the evidence and the model it talked to.
    pub(crate) fn ran(&self, live: &crate::Live, resolution: &Resolution) {
        if self.collector.is_none() {
            return;
        }
        *self.ran.borrow_mut() = Some(Ran {
            redactor: Arc::clone(live.redactor()),
            evidence: live.evidence().entries(),
            usage: live.spend().and_then(super::report_usage::usage_record),
            model: model_name(resolution, live.cassette_note()),
        });
    }

    /// What an exploring trial's search adds (once, before [`TrialReport::ran`]): the schedules
    /// it ran, its verdict and the run shown as a sequence diagram. Redacted with the rest.
    // The exploring runner calls it as it lands.
    #[allow(dead_code)]
    pub(crate) fn explored(&self, exploration: ExplorationRecord) {
        if self.collector.is_none() {
            return;
        }
        *self.exploration.borrow_mut() = Some(exploration.folded());
    }

    /// What a verdict over several live runs adds (`passes = "K of N"`): each run's outcome.
    pub(crate) fn decided(&self, verdict: VerdictRecord) {
        if self.collector.is_none() {
            return;
        }
        *self.verdict.borrow_mut() = Some(verdict);
    }

    /// Writes the trial's record; a report that cannot be written is said on stderr and never
    /// changes the trial's result.
    pub(crate) fn end(
        self,
        scenario: &Scenario,
        ignored: bool,
        result: &Result<Completion, Failed>,
    ) {
        let (Some(dir), Some(collector)) = (dir(), self.collector) else {
            return;
        };
        let (outcome, reason, failure) = match result {
            Ok(Completion::Completed) => (Outcome::Passed, None, None),
            Ok(Completion::Ignored { reason }) if ignored => {
                (Outcome::Ignored, reason.clone(), None)
            }
            Ok(Completion::Ignored { reason }) => (Outcome::Skipped, reason.clone(), None),
            Err(failed) => (Outcome::Failed, None, failed.message().map(str::to_owned)),
        };
        let name = scenario.name();
        let mut record = ScenarioRecord::bare(&name, outcome, &scenario.options);
        record.reason = reason;
        record.failure = failure;
        record.duration_ms = self.started.get().elapsed().as_millis() as u64;
        record.read_timeline(collector.take());
        record.exploration = self.exploration.into_inner();
        record.verdict = self.verdict.into_inner();
        let ran = self.ran.into_inner();
        let redactor = match ran {
            Some(ran) => {
                record.evidence = ran.evidence;
                record.model = ran.model;
                record.usage = ran.usage;
                ran.redactor
            }
            None => Arc::new(Redactor::for_scenario()),
        };
        let mut record = record.redacted(&redactor);
        report::add_history(dir, report::run_id(), &name, &mut record);
        match report::write_scenario(dir, report::run_id(), &record, &redactor) {
            Ok(()) => WROTE.store(true, Ordering::SeqCst),
            Err(e) => crate::progress::progress(&name, &format!("run report: {e}")),
        }
    }
}

/// The model the scenario talked to, with what its cassette says of the run: a replay's
/// staleness or unknown provenance, a verifying run's drift (`note`).
fn model_name(resolution: &Resolution, note: Option<&str>) -> String {
    let name = match (&resolution.plan, resolution.is_cassette()) {
        (ModelPlan::Scripted, _) => "scripted",
        (ModelPlan::Replay { .. }, _) => "cassette (replay)",
        (ModelPlan::Record { .. }, _) if resolution.is_verify() => "real (verifying a cassette)",
        (ModelPlan::Record { .. }, _) => "real (recording a cassette)",
        (ModelPlan::Live, true) => "real (cassette scenario, live)",
        (ModelPlan::Live, false) => "real",
    };
    match note
        .map(str::to_owned)
        .or_else(|| resolution.freshness_note())
    {
        Some(note) => format!("{name}; {note}"),
        None => name.to_owned(),
    }
}

/// The run's skipped scenarios as its report holds them (under nextest, every process's), `None`
/// when the report is off.
pub(crate) fn run_skips() -> Option<Vec<String>> {
    dir().map(|dir| report::skipped_names(dir, report::run_id()))
}

/// Regenerates the index from every record of this run and names it on stderr (the runner's
/// last line). Nothing when the report is off or this process wrote no record.
pub(crate) fn conclude() {
    let Some(dir) = dir().filter(|_| WROTE.load(Ordering::SeqCst)) else {
        return;
    };
    // The history's lines (each failure: new, a known flake, a repeat) before the report's.
    for line in report::conclude_history(dir) {
        eprintln!("live history: {line}");
    }
    match report::regenerate(dir, report::run_id()) {
        Ok(index) => {
            let cwd = std::env::current_dir().unwrap_or_default();
            let shown = index.strip_prefix(&cwd).unwrap_or(&index);
            eprintln!("live report: {}", shown.display());
        }
        Err(e) => eprintln!("live report: not written: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{CassetteSettings, Freshness, assessed_as, resolve};
    use crate::scenario::ScenarioOptions;
    use crate::settings::CassetteMode;

    /// The resolution of a `cassette` scenario under `mode`, its cassette present.
    fn resolved(mode: CassetteMode) -> (tempfile::TempDir, Resolution) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("cassettes")).unwrap();
        std::fs::write(dir.path().join("cassettes/t__x.json"), "{}").unwrap();
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let settings = move || Ok(CassetteSettings { mode, dir: None });
        let resolution = resolve(&options, "t::x", dir.path(), settings).unwrap();
        (dir, resolution)
    }

    /// The report's model column says what the cassette says of the run.
    #[test]
    fn the_model_carries_a_replays_staleness_and_a_verifying_runs_drift() {
        let (_dir, replay) = resolved(CassetteMode::Auto);
        assert_eq!(model_name(&replay, None), "cassette (replay)");
        let stale = assessed_as(
            replay.clone(),
            Freshness::Stale(vec![
                "recorded with OpenCode 1.17.0, this is 1.18.33".into(),
            ]),
        );
        assert_eq!(
            model_name(&stale, None),
            "cassette (replay); stale: recorded with OpenCode 1.17.0, this is 1.18.33"
        );
        let unknown = assessed_as(replay, Freshness::Unknown);
        assert_eq!(
            model_name(&unknown, None),
            "cassette (replay); provenance unknown (recorded before cassettes kept it)"
        );
        let (_dir, verify) = resolved(CassetteMode::Verify);
        assert_eq!(
            model_name(
                &verify,
                Some("drift from cassettes/t__x.json: verdict passed → failed")
            ),
            "real (verifying a cassette); drift from cassettes/t__x.json: verdict passed → failed"
        );
        let (_dir, record) = resolved(CassetteMode::Record);
        assert_eq!(model_name(&record, None), "real (recording a cassette)");
    }
}
