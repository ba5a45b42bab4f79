//! Errors of the scripted model, and of the cassettes it replays and records.

use std::time::Duration;

/// What can go wrong with the scripted model.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    /// At the scenario's end: the script got something wrong. Each entry is one request, as
    /// a line naming it (redacted).
    #[error("{}", script_mistakes(.misses, .unoffered))]
    ScriptMistakes {
        /// The requests nothing in the script answered (each was answered with HTTP 400).
        misses: Vec<String>,
        /// The requests whose scripted reply called a tool they did not offer (HTTP 400 too),
        /// each with that tool and the offered ones.
        unoffered: Vec<String>,
    },
}

/// One section per kind of mistake: what happened and what to do, then one `  - ` line per
/// request.
fn script_mistakes(misses: &[String], unoffered: &[String]) -> String {
    let mut sections = Vec::new();
    if !misses.is_empty() {
        sections.push(section(
            &format!(
                "{} request(s) had no scripted reply (answered with HTTP 400); queue replies \
                 with live.model().reply(..) or add a rule:",
                misses.len()
            ),
            misses,
        ));
    }
    if !unoffered.is_empty() {
        sections.push(section(
            &format!(
                "{} scripted tool call(s) named a tool the request did not offer (answered \
                 with HTTP 400); script a tool the agent offers (OpenCode does not offer a \
                 tool its permission config denies, nor StructuredOutput without a \
                 json_schema format):",
                unoffered.len()
            ),
            unoffered,
        ));
    }
    sections.join("\n")
}

/// `scripted model: <head>` and one `  - ` line per item.
fn section(head: &str, items: &[String]) -> String {
    let mut message = format!("scripted model: {head}");
    for item in items {
        message.push_str("\n  - ");
        message.push_str(item);
    }
    message
}
