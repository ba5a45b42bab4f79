//! What a scenario's timeline holds when the scenario ends: what the run report reads.

use serde::{Deserialize, Serialize};

use super::entry::Entry;

/// Everything a collector gathered (raw, unredacted: the report redacts it once, when it writes).
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub(crate) entries: Vec<Entry>,
    pub(crate) snapshot: Option<SnapshotDiff>,
    pub(crate) kept_roots: Vec<KeptRoot>,
}

/// The accepted snapshot and the new evidence, when they did not match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct SnapshotDiff {
    pub(crate) file: String,
    pub(crate) accepted: String,
    pub(crate) new: String,
}

/// A kept root and the tail of its server's log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct KeptRoot {
    pub(crate) path: String,
    pub(crate) log_tail: String,
}
