//! What can go wrong with gates: a wait that hit its ceiling, an unknown or repeated point name.

use std::time::Duration;

/// A gate or signal failure. Messages say what failed and what to check.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GateError {
    /// A gate was not entered within the (scaled) ceiling.
    #[error(
        "gate `{gate}` was never entered within {} ({detail}): the operation it pauses did not \
         reach it; check that the scenario triggers that operation after arming the gate",
        humantime::format_duration(*ceiling)
    )]
    NeverEntered {
        /// The gate's name: its point's attribute name, or the name given to [`Gate::new`].
        ///
        /// [`Gate::new`]: crate::gates::Gate::new
        gate: String,
        /// Which pass the gate waits for and how many passes the point saw since arming.
        detail: String,
        /// The ceiling after `LIVE_TIMEOUT_SCALE`.
        ceiling: Duration,
    },
    /// A signal was not published within the (scaled) ceiling.
    #[error(
        "signal `{signal}` was never published within {}: check that the code meant to publish \
         it runs",
        humantime::format_duration(*ceiling)
    )]
    NotPublished {
        /// The signal's name.
        signal: String,
        /// The ceiling after `LIVE_TIMEOUT_SCALE`.
        ceiling: Duration,
    },
    /// A gate name in `gate = "..."` is not a gate point.
    #[error("unknown gate point `{name}`: expected one of {expected}")]
    UnknownPoint {
        /// The name as written.
        name: String,
        /// Every valid name.
        expected: String,
    },
    /// A gate name is listed twice in `gate = [...]`.
    #[error(
        "gate point `{name}` is listed twice: list each point once, and arm later passes with \
         `live.gates().arm_nth(point, n)`"
    )]
    DuplicatePoint {
        /// The repeated name.
        name: String,
    },
}
