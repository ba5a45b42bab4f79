//! What can go wrong with gates: a wait that hit its ceiling, an unknown, repeated or
//! impossible point name.

use std::time::Duration;

use harness_opencode_api::spelling::{FORMS, Problem};
use harness_opencode_api::tables::VERSION;

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
    /// A gate name in `gate = "..."` is neither a client point nor a wire, product or ACP point.
    #[error(
        "unknown gate point `{name}`: expected one of {expected}, or a wire, product or ACP \
         point: {FORMS}"
    )]
    UnknownPoint {
        /// The name as written.
        name: String,
        /// Every client point's name.
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
    /// A wire point, route pattern or event type that is not in the grammar (a lowercase
    /// method, a route without its leading `/` or with a query string, a missing part, ...).
    #[error("`{spelling}` is malformed: {reason}")]
    MalformedPoint {
        /// The text as written.
        spelling: String,
        /// What is wrong, and the expected form.
        reason: String,
    },
    /// A route pattern with a placeholder that is neither `{id}` nor one of OpenCode's own.
    #[error(
        "`{spelling}` has an unknown placeholder `{{{placeholder}}}`: use `{{id}}` or one of \
         OpenCode's own: {expected}"
    )]
    UnknownPlaceholder {
        /// The text as written.
        spelling: String,
        /// The placeholder's name, without braces.
        placeholder: String,
        /// Every placeholder OpenCode's routes use.
        expected: String,
    },
    /// A well-formed route pattern that fits no route of OpenCode's API.
    #[error(
        "`{spelling}` fits no route of OpenCode {VERSION} (the nearest is `{nearest}`): write \
         its method and path, a `{{...}}` segment standing for any of its placeholders"
    )]
    NoSuchRoute {
        /// The text as written.
        spelling: String,
        /// The closest route OpenCode has, `METHOD /path`.
        nearest: String,
    },
    /// An event type OpenCode does not send.
    #[error("`{spelling}` names no event type of OpenCode {VERSION} (the nearest is `{nearest}`)")]
    UnknownEventType {
        /// The text as written.
        spelling: String,
        /// The closest event type OpenCode has.
        nearest: String,
    },
    /// An `acp before|after` point naming no ACP method.
    #[error("`{spelling}` names no ACP method (the nearest is `{nearest}`)")]
    UnknownAcpMethod {
        /// The text as written.
        spelling: String,
        /// The closest ACP v1 method.
        nearest: String,
    },
    /// An `acp update` point naming no kind of `session/update`.
    #[error("`{spelling}` names no kind of `session/update` (the nearest is `{nearest}`)")]
    UnknownAcpUpdate {
        /// The text as written.
        spelling: String,
        /// The closest kind.
        nearest: String,
    },
    /// A product point name outside `[a-z0-9_.-]+`.
    #[error(
        "`{spelling}` is not a product point name: use lowercase letters, digits, `_`, `.` and `-`"
    )]
    BadProductName {
        /// The text as written (`product <name>` in a gate list, the bare name elsewhere).
        spelling: String,
    },
}

impl GateError {
    /// The error for a spelling's `problem`; its message is the one the attribute reports at
    /// compile time (`registry`'s `attribute_agrees` tests hold them equal).
    pub(super) fn from_problem(spelling: &str, problem: Problem) -> GateError {
        let spelling = spelling.to_owned();
        match problem {
            Problem::Malformed(reason) => GateError::MalformedPoint { spelling, reason },
            Problem::UnknownPlaceholder(placeholder) => GateError::UnknownPlaceholder {
                spelling,
                placeholder,
                expected: harness_opencode_api::spelling::placeholder_list(),
            },
            Problem::NoSuchRoute(nearest) => GateError::NoSuchRoute { spelling, nearest },
            Problem::UnknownEventType(nearest) => GateError::UnknownEventType {
                spelling,
                nearest: nearest.to_owned(),
            },
            Problem::UnknownAcpMethod(nearest) => GateError::UnknownAcpMethod {
                spelling,
                nearest: nearest.to_owned(),
            },
            Problem::UnknownAcpUpdate(nearest) => GateError::UnknownAcpUpdate {
                spelling,
                nearest: nearest.to_owned(),
            },
            Problem::BadProductName => GateError::BadProductName { spelling },
        }
    }
}
