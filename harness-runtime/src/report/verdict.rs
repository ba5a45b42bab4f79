//! A verdict's part of its record (`passes = "K of N"`, live): each run's outcome and failure,
//! and the verdict they added up to.

use serde::{Deserialize, Serialize};

use crate::redact::Redactor;

/// What the verdict runner tells the report of one scenario's runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VerdictRecord {
    /// K: the passes the verdict needs.
    pub(crate) needed: u32,
    /// N: the most runs it may take.
    pub(crate) max_runs: u32,
    /// `3 of 4 passed (3 of 5 needed)`, as the progress line says it.
    pub(crate) summary: String,
    /// Every run that ran, in order.
    pub(crate) runs: Vec<VerdictRun>,
}

/// One run of a verdict.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct VerdictRun {
    /// `passed`, `failed` or `skipped`.
    pub(crate) outcome: String,
    pub(crate) duration_ms: u64,
    /// Why it failed (or was skipped), redacted by the runner with that run's redactor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
}

impl VerdictRecord {
    /// Every string through `redactor` (the scenario's last run's), on top of each run's own.
    pub(crate) fn redacted(mut self, redactor: &Redactor) -> Self {
        self.summary = redactor.redact(&self.summary);
        for run in &mut self.runs {
            if let Some(failure) = &mut run.failure {
                *failure = redactor.redact(failure);
            }
        }
        self
    }
}
