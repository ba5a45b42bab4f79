//! Forwarding gates: deterministic interleavings of agent operations.
//!
//! The client and provisioning call [`Gates::pass`] at every [`GatePoint`]; a scenario arms a
//! point, waits until the operation [entered](Gate::wait_until_entered_within) its gate, does
//! what must happen meanwhile, and [releases](Gate::release) it. A one-shot signal is the fact
//! underneath; [`Counters`] say how many prompts, replies, aborts and process exits happened.

mod counters;
mod error;
mod gate;
mod point;
mod registry;
pub(crate) mod signal;

pub use counters::{Counter, Counters};
pub use error::GateError;
pub use gate::Gate;
pub use point::GatePoint;
pub use registry::Gates;
pub(crate) use signal::Signal;
