//! What can go wrong running a task, typed, each saying what failed and what to do.

use std::time::Duration;

/// Why the product could not run a task to one of its outcomes.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProductError {
    /// The base URL is not an `http://` URL.
    #[error(
        "the agent url {url:?} is not an http url: pass the server's base url, e.g. http://127.0.0.1:4096"
    )]
    BadUrl {
        /// The URL as given.
        url: String,
    },
    /// A request did not reach the agent, or its answer did not arrive.
    #[error("{what} failed: {cause}; is the agent running at its url?")]
    Transport {
        /// The request, `METHOD /path`.
        what: String,
        /// The cause chain.
        cause: String,
    },
    /// The agent answered with a status outside 2xx.
    #[error("{what} answered {status}: {body}")]
    Status {
        /// The request, `METHOD /path`.
        what: String,
        /// The HTTP status.
        status: u16,
        /// The answer's body (shortened).
        body: String,
    },
    /// An answer or event was not the JSON this product understands.
    #[error("could not read {what}: {cause}; is this an OpenCode 1.18 server?")]
    Decode {
        /// What was read.
        what: String,
        /// The decoder's complaint.
        cause: String,
    },
    /// The event stream could not be (re)established.
    #[error("the event stream was lost and {attempts} reconnects failed, the last with: {last}")]
    StreamLost {
        /// How many reconnects were tried.
        attempts: u32,
        /// The last reconnect's error.
        last: String,
    },
    /// The task did not settle (no idle session) within its ceiling.
    #[error(
        "the session did not settle within {after:?} ({state}); raise the task's settle ceiling or check the agent"
    )]
    NotSettled {
        /// The ceiling that passed.
        after: Duration,
        /// What the product was waiting for.
        state: String,
    },
}

impl ProductError {
    /// The HTTP status of a [`ProductError::Status`].
    pub fn status(&self) -> Option<u16> {
        match self {
            ProductError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// `error`'s message with its whole cause chain (reqwest's own message omits the useful part).
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    message
}
