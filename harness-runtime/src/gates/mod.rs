//! Forwarding gates: deterministic interleavings of agent operations.
//!
//! The client and provisioning call [`Gates::pass`] at every [`GatePoint`]; a scenario arms a
//! point, waits until the operation [entered](Gate::wait_until_entered_within) its gate, does
//! what must happen meanwhile, and [releases](Gate::release) it. A one-shot signal is the fact
//! underneath; [`Counters`] say how many prompts, replies, aborts and process exits happened.
//!
//! A product driving the agent through its own client is gated the same way, at a
//! [`WirePoint`] (the forwarder in front of the agent pauses a request, a response or an event
//! matching it) or at a [`ProductPoint`] in the product's own code; an ACP agent's traffic at
//! an [`AcpPoint`].

mod acp_point;
mod any_point;
mod counters;
mod error;
mod gate;
mod keyed;
mod point;
mod product_point;
mod registry;
mod route_pattern;
pub(crate) mod signal;
mod wire_point;

pub use acp_point::AcpPoint;
pub use any_point::Point;
pub use counters::{Counter, Counters};
pub use error::GateError;
pub use gate::Gate;
pub use point::GatePoint;
pub use product_point::ProductPoint;
pub use registry::Gates;
pub use route_pattern::RoutePattern;
pub(crate) use route_pattern::route_template;
pub(crate) use signal::Signal;
pub use wire_point::{EventType, WirePoint};
