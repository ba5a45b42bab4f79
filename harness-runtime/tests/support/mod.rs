//! Shared by the test binaries that provision real agents outside a `live` suite.

pub mod agents;

pub use agents::{live, start, tests};
