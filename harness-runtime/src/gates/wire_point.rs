//! Wire points: where the forwarder in front of an agent pauses a product's traffic.

use std::fmt;
use std::str::FromStr;

use super::{GateError, RoutePattern};
use harness_opencode_api::spelling::{self, Problem, Spelled};

/// A point on the wire between a product and its agent, where the forwarder can hold the
/// product's traffic. Spelled as in `#[live_agent_test(gate = "...")]`:
///
/// - `request <METHOD> <route>`: before a product request the [`RoutePattern`] matches is
///   forwarded to the agent (`request POST /session/{id}/abort`);
/// - `response <METHOD> <route>`: after its response arrived from the agent, before the product
///   gets it;
/// - `event <type>`: before an event of that [`EventType`] is delivered on a product's event
///   stream; that stream holds it, and every later event in order, until the gate is released
///   (other streams, and the agent itself, go on).
///
/// [`Display`](fmt::Display) gives the spelling back. Arm one with
/// [`Gates::arm`](crate::gates::Gates::arm).
///
/// ```
/// use harness_runtime::gates::WirePoint;
///
/// let point = WirePoint::parse("request POST /permission/{id}/reply").unwrap();
/// assert!(matches!(point, WirePoint::Request(ref route) if route.method() == "POST"));
/// assert_eq!(point.to_string(), "request POST /permission/{id}/reply");
///
/// let asked: WirePoint = "event permission.asked".parse().unwrap();
/// assert_eq!(asked.to_string(), "event permission.asked");
///
/// let error = WirePoint::parse("event permission.askd").unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "`event permission.askd` names no event type of OpenCode 1.18.33 \
///      (the nearest is `permission.asked`)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum WirePoint {
    /// `request <METHOD> <route>`: before a matching product request is forwarded.
    Request(RoutePattern),
    /// `response <METHOD> <route>`: before the response to a matching request reaches the
    /// product.
    Response(RoutePattern),
    /// `event <type>`: before an event of the type is delivered on a product's event stream.
    /// Every delivery is a pass: an event delivered on two of the product's streams is two.
    Event(EventType),
}

impl WirePoint {
    /// Parses a wire point's spelling. The error names it and what is wrong: malformed, an
    /// unknown placeholder, no OpenCode route the pattern fits, an unknown event type, or a
    /// spelling that is not a wire point (a client or product point).
    pub fn parse(spelling: &str) -> Result<WirePoint, GateError> {
        let spelled =
            spelling::parse(spelling).map_err(|p| GateError::from_problem(spelling, p))?;
        WirePoint::from_spelled(spelled).ok_or_else(|| {
            GateError::from_problem(
                spelling,
                Problem::Malformed(
                    "expected `request <METHOD> <route>`, `response <METHOD> <route>` or \
                     `event <type>`"
                        .to_owned(),
                ),
            )
        })
    }

    /// The wire point a checked spelling names, if it names one.
    pub(super) fn from_spelled(spelled: Spelled<'_>) -> Option<WirePoint> {
        match spelled {
            Spelled::Request(route) => Some(WirePoint::Request(RoutePattern::from_route(route))),
            Spelled::Response(route) => Some(WirePoint::Response(RoutePattern::from_route(route))),
            Spelled::Event(kind) => Some(WirePoint::Event(EventType(kind))),
            Spelled::Client(_) | Spelled::Product(_) | Spelled::Acp(_) => None,
        }
    }

    /// The first word of the spelling: `request`, `response` or `event`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            WirePoint::Request(_) => "request",
            WirePoint::Response(_) => "response",
            WirePoint::Event(_) => "event",
        }
    }
}

impl fmt::Display for WirePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WirePoint::Request(route) | WirePoint::Response(route) => {
                write!(f, "{} {route}", self.kind())
            }
            WirePoint::Event(kind) => write!(f, "event {kind}"),
        }
    }
}

impl FromStr for WirePoint {
    type Err = GateError;

    fn from_str(spelling: &str) -> Result<Self, Self::Err> {
        WirePoint::parse(spelling)
    }
}

/// An event `type` OpenCode sends on its event streams (`permission.asked`, `session.idle`,
/// `message.part.updated`, ...), checked against the OpenCode version the harness was built
/// against.
///
/// ```
/// use harness_runtime::gates::EventType;
///
/// assert_eq!(EventType::parse("session.idle").unwrap().as_str(), "session.idle");
/// assert!(EventType::parse("session.idel").is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EventType(&'static str);

impl EventType {
    /// The event type named `name`; the error names the nearest known one.
    pub fn parse(name: &str) -> Result<EventType, GateError> {
        spelling::parse_event(name, "an event type such as `permission.asked`")
            .map(EventType)
            .map_err(|problem| GateError::from_problem(name, problem))
    }

    /// The type as OpenCode spells it.
    pub fn as_str(&self) -> &'static str {
        self.0
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl FromStr for EventType {
    type Err = GateError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        EventType::parse(name)
    }
}
