//! One thing that happened, and the lane it is drawn in.

use serde::{Deserialize, Serialize};

/// The lane of the timeline an entry is drawn in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Lane {
    /// Root, spawn, the listening line, health.
    Provisioning,
    /// Prompts posted, the event stream by type, aborts, the turn's end.
    Turn,
    /// Model requests and the reply each got (or the miss).
    Model,
    /// Tool calls from start to end.
    Tools,
    /// Permission and question asks and their replies.
    Asks,
    /// Gate points armed, entered, released.
    Gates,
    /// Stop, sweep, kept roots.
    Teardown,
    /// Product processes: start, each line of output, exit or stop.
    Product,
    /// What a product sent through a forwarder (method, route, status), and wire faults fired.
    Wire,
}

/// One timestamped thing that happened during a scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// Milliseconds since the scenario started.
    pub(crate) at_ms: f64,
    pub(crate) lane: Lane,
    /// What happened, short (`spawn`, `session.idle`, `request 1`, `bash running`).
    pub(crate) kind: String,
    /// The detail.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) text: String,
    /// Entries of one key are one span on the timeline (a tool call from start to end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<String>,
    /// How many identical entries in a row this one stands for (streamed deltas).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub(crate) count: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}
