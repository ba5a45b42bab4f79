//! Points on an ACP agent's traffic: before or after a method, before an update of a kind.

use std::fmt;

use harness_opencode_api::spelling::{self, AcpSpelled, Problem, Spelled};

use super::GateError;

/// A point on the traffic between the harness and an ACP agent, spelled
/// `acp before <method>`, `acp after <method>` or `acp update <kind>`:
///
/// - `acp before session/prompt`: before the harness sends the request (or, for a method the
///   agent calls, such as `session/request_permission`, before the harness handles it);
/// - `acp after session/prompt`: after the agent's answer arrived, before the caller sees it (for
///   a method the agent calls: after the harness answered it);
/// - `acp update tool_call`: before the harness handles a `session/update` of that kind; with
///   [`arm_nth`](super::Gates::arm_nth), the Nth one.
///
/// A paused point holds the whole stream in its direction: what the agent sent later waits too.
/// Methods and kinds are checked against ACP v1's (at compile time on the attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AcpPoint(pub(crate) AcpSpelled);

impl AcpPoint {
    /// Parses `acp before|after <method>` or `acp update <kind>`.
    pub fn parse(spelling: &str) -> Result<AcpPoint, GateError> {
        match spelling::parse(spelling) {
            Ok(Spelled::Acp(point)) => Ok(AcpPoint(point)),
            Ok(_) => Err(GateError::from_problem(
                spelling,
                Problem::Malformed(
                    "expected `acp before <method>`, `acp after <method>` or `acp update <kind>`"
                        .to_owned(),
                ),
            )),
            Err(problem) => Err(GateError::from_problem(spelling, problem)),
        }
    }
}

impl fmt::Display for AcpPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            AcpSpelled::Before(method) => write!(f, "acp before {method}"),
            AcpSpelled::After(method) => write!(f, "acp after {method}"),
            AcpSpelled::Update(kind) => write!(f, "acp update {kind}"),
        }
    }
}
