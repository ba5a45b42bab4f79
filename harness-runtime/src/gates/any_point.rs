//! Any point a gate can be armed at: the client's, the wire's or the product's, as one type.

use std::fmt;

use super::keyed::Key;
use super::{AcpPoint, GateError, GatePoint, ProductPoint, WirePoint};
use harness_opencode_api::spelling::{self, Spelled};

/// Where a gate can be armed: a client point ([`GatePoint`]), a point on the wire between a
/// product and its agent ([`WirePoint`]), or a named point in the product's own code
/// ([`ProductPoint`]). Each kind converts into it, so [`Gates::arm`](super::Gates::arm),
/// [`arm_nth`](super::Gates::arm_nth), [`gate`](super::Gates::gate) and
/// [`release`](super::Gates::release) take any. [`Display`](fmt::Display) gives the spelling
/// `gate = "..."` takes.
///
/// ```
/// use harness_runtime::gates::{GatePoint, Gates, Point, WirePoint};
///
/// let gates = Gates::default();
/// let abort = gates.arm(GatePoint::BeforeAbort);
/// let idle = gates.arm(WirePoint::parse("event session.idle").unwrap());
/// let save = gates.arm(Point::product("before_save").unwrap());
/// let reply = gates.arm(Point::parse("request POST /permission/{id}/reply").unwrap());
/// assert_eq!(save.name(), "product before_save");
/// assert_eq!(Point::from(GatePoint::BeforeAbort).to_string(), "abort");
/// # let _ = (abort, idle, reply);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point(pub(super) Target);

/// What a [`Point`] is: the client's fixed points are counted apart from the named ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    Client(GatePoint),
    Named(Key),
}

impl Point {
    /// Parses any spelling `gate = "..."` takes: a client point's name (`abort`), a wire point
    /// (`request <METHOD> <route>`, `response <METHOD> <route>`, `event <type>`) or
    /// `product <name>`. The error names what is unknown or malformed.
    pub fn parse(spelling: &str) -> Result<Point, GateError> {
        let spelled =
            spelling::parse(spelling).map_err(|p| GateError::from_problem(spelling, p))?;
        match spelled {
            Spelled::Client(name) => {
                GatePoint::from_name(name)
                    .map(Point::from)
                    .ok_or_else(|| GateError::UnknownPoint {
                        name: spelling.to_owned(),
                        expected: GatePoint::names_list(),
                    })
            }
            Spelled::Product(name) => Ok(Point(Target::Named(Key::Product(name.to_owned())))),
            Spelled::Acp(point) => Ok(Point(Target::Named(Key::Acp(AcpPoint(point))))),
            wire => WirePoint::from_spelled(wire)
                .map(Point::from)
                .ok_or_else(|| GateError::UnknownPoint {
                    name: spelling.to_owned(),
                    expected: GatePoint::names_list(),
                }),
        }
    }

    /// The product point `name` (`[a-z0-9_.-]+`); the error is a name outside that set.
    pub fn product(name: &str) -> Result<Point, GateError> {
        spelling::check_product_name(name).map_err(|p| GateError::from_problem(name, p))?;
        Ok(Point(Target::Named(Key::Product(name.to_owned()))))
    }
}

impl From<GatePoint> for Point {
    fn from(point: GatePoint) -> Point {
        Point(Target::Client(point))
    }
}

impl From<WirePoint> for Point {
    fn from(point: WirePoint) -> Point {
        Point(Target::Named(Key::Wire(point)))
    }
}

impl From<&WirePoint> for Point {
    fn from(point: &WirePoint) -> Point {
        Point::from(point.clone())
    }
}

impl From<AcpPoint> for Point {
    fn from(point: AcpPoint) -> Point {
        Point(Target::Named(Key::Acp(point)))
    }
}

impl From<&ProductPoint> for Point {
    fn from(point: &ProductPoint) -> Point {
        Point(Target::Named(Key::Product(point.name().to_owned())))
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Target::Client(point) => point.fmt(f),
            Target::Named(key) => key.fmt(f),
        }
    }
}
