//! What can go wrong with a product process. Every message is redacted when it is built.

use std::time::Duration;

/// A failure to start, wait for or stop a product.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProductError {
    /// The product's program could not be started at all.
    #[error("could not start {product} ({command}): {message}")]
    Spawn {
        /// Which product (`product 1 (node)`).
        product: String,
        /// Its command line, redacted.
        command: String,
        /// Why.
        message: String,
    },
    /// The scenario's agents run confined, but the sandbox is unavailable here (under `CI` or
    /// `LIVE_STRICT=1`).
    #[error("could not confine the product: {0}")]
    Sandbox(String),
    /// A file-system step of starting it failed (its directory, its log files).
    #[error("could not {what} of {product}: {source}")]
    Io {
        /// Which product.
        product: String,
        /// What was being done, e.g. "create the directory".
        what: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The reaper, which kills the product if the runner dies, could not be told about it.
    #[error("could not register {product} with the reaper: {message}")]
    Reaper {
        /// Which product.
        product: String,
        /// Why.
        message: String,
    },
    /// [`Product::wait_within`](super::Product::wait_within) reached its ceiling.
    #[error(
        "{product} still runs after {}: it was left running (the scenario's end stops it); \
         if it is only slow, give it a longer ceiling or set LIVE_TIMEOUT_SCALE=2; its output \
         ended:\n{tail}",
        humantime::format_duration(*waited)
    )]
    StillRunning {
        /// Which product.
        product: String,
        /// The ceiling, scaled.
        waited: Duration,
        /// The last lines of its output, redacted.
        tail: String,
    },
    /// [`Product::wait_for_output`](super::Product::wait_for_output) did not see the text.
    #[error(
        "{product} printed no line containing {needle:?} {}; its output ended:\n{tail}",
        ended.as_ref().map_or_else(
            || format!("within {}", humantime::format_duration(*waited)),
            |ended| format!("before {ended}")
        )
    )]
    OutputNotSeen {
        /// Which product.
        product: String,
        /// The text waited for, redacted.
        needle: String,
        /// The ceiling, scaled.
        waited: Duration,
        /// Why no more output could come before the ceiling: `it exited (exit status: 2)`, or
        /// `it closed its output`.
        ended: Option<String>,
        /// The last lines of its output, redacted.
        tail: String,
    },
    /// A stop could not confirm the product was reaped.
    #[error("could not stop {product}: {message}; its output ended:\n{tail}")]
    Stop {
        /// Which product.
        product: String,
        /// Why.
        message: String,
        /// The last lines of its output, redacted.
        tail: String,
    },
}
