//! What a scenario's turns spent, as the report keeps it: small (figures only, a line per turn),
//! and for a replay the cost the run avoided (what the recording paid, replayed for free). Plain
//! data: the runner makes it from the scenario's measured spend (`runner/report_usage.rs`).

use serde::{Deserialize, Serialize};

/// A scenario's usage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct UsageRecord {
    /// `wall` (measured as it happened) or `recorded` (replayed: the recording's times).
    pub(crate) clock: String,
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) reasoning: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) cache_read: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) cache_write: u64,
    pub(crate) cost: f64,
    /// Replayed: the cost the recording paid and this run did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) avoided_cost: Option<f64>,
    /// How many model requests were timed.
    #[serde(default)]
    pub(crate) requests: usize,
    /// The slowest time to a first token of those requests, and which (1-based).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) slowest_first_token: Option<(usize, u64)>,
    #[serde(default)]
    pub(crate) turns: Vec<TurnUsage>,
}

/// One turn's usage.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TurnUsage {
    pub(crate) input: u64,
    pub(crate) output: u64,
    pub(crate) reasoning: u64,
    pub(crate) cost: f64,
    /// Assistant messages (model steps).
    pub(crate) steps: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) duration_ms: Option<u64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}
