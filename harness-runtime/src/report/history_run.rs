//! This process's part of the history: when a trial ends, its scenario's history as the file
//! holds it, with this outcome added, goes into the record (the page shows it); when the run
//! ends, the outcomes are added to the files and each failure is said in one line.

use std::path::Path;
use std::sync::Mutex;

use super::history::{HistoryOutcome, PastOutcome};
use super::history_file::{self, history_dir};
use super::record::{Outcome, ScenarioRecord};

/// An outcome of this process not yet in its file, and what the end of the run says of it.
struct Pending {
    scenario: String,
    outcome: PastOutcome,
    line: Option<String>,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

/// Adds the history of `scenario` to its `record` (redacted already: its failure line is kept as
/// the report shows it; its name may not be, when a secret's text is part of it) and keeps the
/// outcome for [`conclude_history`]. Nothing when the history is off or the scenario did not run.
pub(crate) fn add_history(
    report: &Path,
    run_id: &str,
    scenario: &str,
    record: &mut ScenarioRecord,
) {
    let Some(dir) = history_dir(report) else {
        return;
    };
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let outcome = match record.outcome {
        Outcome::Passed => HistoryOutcome::Passed,
        Outcome::Failed => HistoryOutcome::Failed,
        Outcome::Skipped => HistoryOutcome::Skipped,
        Outcome::Ignored => return,
    };
    let mut outcome = PastOutcome::new(run_id, now, outcome, record.failure.as_deref());
    outcome.verdict = record.verdict.as_ref().map(|v| v.summary.clone());
    let summary = history_file::read(&dir, scenario).summary(outcome.clone());
    let pending = Pending {
        scenario: scenario.to_owned(),
        outcome,
        line: summary.line.clone(),
    };
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(pending);
    record.history = Some(summary);
}

/// Adds this process's outcomes to the history; the lines to print when the run ends: what went
/// wrong writing it, then `<scenario>: <what its failure is>` for each failure, such as
/// `tools::bash_runs: new failure (passed the last 12 runs)`.
pub(crate) fn conclude_history(report: &Path) -> Vec<String> {
    let pending = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
    let Some(dir) = history_dir(report).filter(|_| !pending.is_empty()) else {
        return Vec::new();
    };
    let mut lines = history_file::add(
        &dir,
        pending
            .iter()
            .map(|p| (p.scenario.clone(), p.outcome.clone()))
            .collect(),
    );
    lines.extend(
        pending
            .into_iter()
            .filter_map(|p| Some(format!("{}: {}", p.scenario, p.line?))),
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{VerdictRecord, VerdictRun};

    /// A verdict over several runs is one outcome of the run of the suite, passed or failed as
    /// the verdict is, keeping its figure; its inner runs are not outcomes of their own.
    #[test]
    fn a_verdict_over_several_runs_counts_once_with_its_figure() {
        let report = tempfile::tempdir().unwrap();
        let scenario = "history_run::three_of_five";
        let run = |outcome: &str| VerdictRun {
            outcome: outcome.to_owned(),
            duration_ms: 10,
            failure: (outcome == "failed").then(|| "wrong answer".to_owned()),
        };
        let mut record = ScenarioRecord::bare(
            scenario,
            Outcome::Passed,
            &crate::scenario::ScenarioOptions::DEFAULT,
        );
        record.verdict = Some(VerdictRecord {
            needed: 3,
            max_runs: 5,
            summary: "3 of 4 passed (3 of 5 needed)".to_owned(),
            runs: vec![run("passed"), run("failed"), run("passed"), run("passed")],
        });
        add_history(report.path(), "r1", scenario, &mut record);
        let summary = record.history.expect("a history");
        assert_eq!((summary.passed, summary.verdicts), (1, 1));
        assert_eq!(
            summary.recent[0].verdict.as_deref(),
            Some("3 of 4 passed (3 of 5 needed)")
        );
        let lines = conclude_history(report.path());
        assert!(lines.iter().all(|l| !l.starts_with(scenario)), "{lines:?}");
        let kept = history_file::read(&report.path().join("history"), scenario);
        assert_eq!(kept.outcomes.len(), 1);
        assert_eq!(kept.outcomes[0].outcome, HistoryOutcome::Passed);
        assert_eq!(kept.outcomes[0].verdict, summary.recent[0].verdict);
    }
}
