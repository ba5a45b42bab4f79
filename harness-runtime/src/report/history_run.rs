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
    let outcome = PastOutcome::new(run_id, now, outcome, record.failure.as_deref());
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
