//! Errors of the scripted model, and of the cassettes it replays and records.

use std::time::Duration;

/// What can go wrong with the scripted model.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The loopback listener could not be bound.
    #[error("scripted model: could not listen on 127.0.0.1: {0}; check that loopback is up")]
    Bind(#[source] std::io::Error),
    /// Started outside a tokio runtime.
    #[error(
        "scripted model: no tokio runtime; start it from inside the scenario (live.model() in the test body)"
    )]
    NoRuntime,
    /// A wait reached its ceiling.
    #[error("scripted model: timed out after {ceiling:?} waiting for {what}; {pending}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The (scaled) ceiling.
        ceiling: Duration,
        /// What was pending when the ceiling was hit.
        pending: String,
    },
    /// The server stopped while something waited on it.
    #[error("scripted model: stopped while {what}")]
    Stopped {
        /// What was waiting.
        what: String,
    },
    /// A cassette could not be replayed (missing, unreadable, broken) or recorded (no usable
    /// upstream in the user's config).
    #[error(transparent)]
    Cassette(#[from] crate::cassette::CassetteError),
}
