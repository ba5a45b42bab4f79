//! A run: every scenario record of one run id, in the order the index shows them.

use serde::{Deserialize, Serialize};

use super::record::{Outcome, ScenarioRecord};

/// What the page renders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunReport {
    pub(crate) run_id: String,
    pub(crate) counts: Counts,
    /// Failures first, then skipped, ignored, passed; by name within each.
    pub(crate) scenarios: Vec<ScenarioRecord>,
}

/// How many scenarios ended each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    pub(crate) total: usize,
    pub(crate) failed: usize,
    pub(crate) passed: usize,
    pub(crate) skipped: usize,
    pub(crate) ignored: usize,
}

impl RunReport {
    pub(crate) fn new(run_id: &str, mut scenarios: Vec<ScenarioRecord>) -> Self {
        scenarios.sort_by(|a, b| (a.outcome.rank(), &a.name).cmp(&(b.outcome.rank(), &b.name)));
        let mut counts = Counts {
            total: scenarios.len(),
            ..Counts::default()
        };
        for scenario in &scenarios {
            *match scenario.outcome {
                Outcome::Failed => &mut counts.failed,
                Outcome::Passed => &mut counts.passed,
                Outcome::Skipped => &mut counts.skipped,
                Outcome::Ignored => &mut counts.ignored,
            } += 1;
        }
        RunReport {
            run_id: run_id.to_owned(),
            counts,
            scenarios,
        }
    }
}
