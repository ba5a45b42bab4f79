//! The forwarder in front of every agent, and the scenario's wire.
//!
//! A product under test talks to OpenCode through its own client. The scenario hands it
//! [`Agent::forwarded_url`](crate::opencode::Agent::forwarded_url) instead of the agent's own
//! endpoint: a transparent HTTP + SSE proxy on loopback, started with the agent, that forwards
//! every request and response unchanged (method, headers but the hop-by-hop ones, status, bodies,
//! chunked and event streams as their bytes arrive, upgrades), to whatever port the agent has
//! now (a restart may change it). Routes it does not know pass too. On a shared server it adds
//! the agent's workspace as `?directory=` where the product named none, so the product sees a
//! server of its own.
//!
//! On the way, the scenario's [wire gates](crate::gates) pause a request before it is
//! forwarded, its response before the product gets it, or an event before the product's stream
//! delivers it (holding every later one, in order); the [`Wire`] injects faults and logs the
//! product's requests. When nothing is armed a request costs a few atomic loads and one log
//! entry over the forwarding itself.
//!
//! An agent that is gone (stopped, crashed, never started) answers the product
//! `502 {"error":"live-forwarder: upstream ...: <cause>"}`, redacted; a response gate does not
//! hold that answer (it holds the agent's, and a fault's).

mod error;
mod frames;
mod proxy;
#[cfg(any(test, feature = "testing"))]
pub(crate) mod standalone;
mod wire;

pub use error::WireError;
pub(crate) use proxy::{Forwarder, Target, Upstream};
pub use wire::{ProductRequest, Wire, WireCounters};
