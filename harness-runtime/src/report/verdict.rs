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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Outcome, ScenarioRecord};

    /// A run's failure reaches the record redacted as the rest; a record without a verdict has
    /// no such key (the page shows it as before).
    #[test]
    fn a_verdict_reaches_the_record_redacted() {
        const CANARY: &str = "canary-verdict-41d9";
        let redactor = Redactor::default();
        redactor.add_secret(CANARY);
        let mut record = ScenarioRecord::bare(
            "probes::flaky",
            Outcome::Failed,
            &crate::scenario::ScenarioOptions::DEFAULT,
        );
        assert!(!serde_json::to_string(&record).unwrap().contains("verdict"));
        record.verdict = Some(VerdictRecord {
            needed: 3,
            max_runs: 5,
            summary: "1 of 4 passed (3 of 5 needed)".into(),
            runs: vec![
                VerdictRun {
                    outcome: "passed".into(),
                    duration_ms: 1200,
                    failure: None,
                },
                VerdictRun {
                    outcome: "failed".into(),
                    duration_ms: 900,
                    failure: Some(format!("the model said {CANARY}")),
                },
            ],
        });
        let json = serde_json::to_string(&record.redacted(&redactor)).unwrap();
        assert!(!json.contains(CANARY), "{json}");
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let verdict = &value["verdict"];
        assert_eq!(verdict["summary"], "1 of 4 passed (3 of 5 needed)");
        assert_eq!(verdict["runs"][0]["outcome"], "passed");
        assert!(verdict["runs"][0].get("failure").is_none(), "{verdict}");
        assert_eq!(verdict["runs"][1]["failure"], "the model said [secret]");
    }
}
