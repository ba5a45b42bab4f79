//! The client's typed errors. Every text field is built through the scenario's redactor, so a
//! message can be printed or snapshotted as it is.

use std::time::Duration;

use crate::redact::Redactor;

/// What went wrong talking to an OpenCode server, collecting an event stream or a turn.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request never got an HTTP answer (connection refused, reset, request timeout).
    #[error(
        "{what} failed before an answer arrived: {message}; check that the agent server is running and reachable"
    )]
    Transport {
        /// The operation, e.g. `GET /session/{id}`.
        what: String,
        /// The transport's own description, redacted.
        message: String,
    },
    /// The server answered with an error status and (usually) a `{name, data}` body.
    #[error("{what} answered HTTP {status}{}: {message}", name.as_deref().map(|n| format!(" {n}")).unwrap_or_default())]
    Http {
        /// The operation.
        what: String,
        /// The HTTP status code.
        status: u16,
        /// The error's `name` (`NotFoundError`, `BadRequest`, …) when the body had one.
        name: Option<String>,
        /// `data.message` or the raw body, redacted.
        message: String,
    },
    /// An answer or an event did not have the expected shape.
    #[error(
        "could not decode {what} at `{path}`: {message}; the server may be a different OpenCode version"
    )]
    Decode {
        /// What was being decoded.
        what: String,
        /// The JSON path of the first mismatch (`.` when the document itself was invalid).
        path: String,
        /// The decoder's description, redacted.
        message: String,
    },
    /// A bounded wait ran out.
    #[error("{what} did not complete within {after:?}; pending: {pending}")]
    Timeout {
        /// What was awaited.
        what: String,
        /// The (scaled) ceiling.
        after: Duration,
        /// What was still pending, redacted.
        pending: String,
    },
    /// A turn did not reach idle within its ceiling.
    #[error(
        "turn did not finish within {after:?}; pending: {pending}; raise the prompt's ceiling or LIVE_TIMEOUT_SCALE if the agent is just slow"
    )]
    TurnTimeout {
        /// The (scaled) turn ceiling.
        after: Duration,
        /// What the collector and the server said was pending at that moment, redacted.
        pending: String,
    },
    /// An ask stayed unanswered for the prompt's ask ceiling ([`super::Prompt::with_ask_ceiling`]).
    #[error(
        "an ask stayed unanswered for {after:?}; pending: {pending}; answer it in the prompt's ask policy, or raise the prompt's ask ceiling if someone else answers it later"
    )]
    AskUnanswered {
        /// The ask ceiling.
        after: Duration,
        /// What the collector and the server said was pending at that moment, redacted.
        pending: String,
    },
    /// The event stream sent nothing, not even a heartbeat, for longer than the watchdog allows.
    #[error(
        "event stream silent for {after:?} (heartbeats are expected every 10 s); pending: {pending}"
    )]
    StreamSilent {
        /// The (scaled) silence ceiling.
        after: Duration,
        /// What was pending, redacted.
        pending: String,
    },
    /// The event stream ended while something was still awaited. Nothing is replayed by the
    /// server, so the client does not reconnect silently: the turn's outcome is unknown.
    #[error(
        "event stream ended while waiting; pending: {pending}; the agent server may have exited"
    )]
    StreamEnded {
        /// What was pending, redacted.
        pending: String,
    },
    /// The stream ended in the middle of a frame (no terminating blank line).
    #[error(
        "event stream ended inside a frame ({bytes} bytes unterminated); the agent server may have exited"
    )]
    TruncatedFrame {
        /// How many bytes of the unfinished frame had arrived.
        bytes: usize,
    },
    /// One event frame exceeded the memory bound.
    #[error(
        "event frame larger than {limit} bytes rejected; raise StreamOptions::max_frame_bytes if this is expected"
    )]
    FrameTooLarge {
        /// The bound in bytes.
        limit: usize,
    },
    /// `GET /session/{id}/message` answers 400 once any prompt of the session carried `format`.
    #[error(
        "messages of session {session} cannot be listed: OpenCode answers 400 after a prompt with `format`; use the Turn returned by the prompt instead"
    )]
    MessagesUnavailableAfterStructuredPrompt {
        /// The session id, redacted.
        session: String,
    },
    /// The model did not produce valid structured output.
    #[error("structured output failed after {retries} retries: {message}")]
    StructuredOutput {
        /// The server's message, redacted.
        message: String,
        /// How many retries OpenCode made.
        retries: u64,
    },
    /// A turn that was expected to carry structured output has none (and no error saying why).
    #[error("the turn has no structured output; was the prompt sent with a json_schema format?")]
    NoStructuredOutput,
    /// The client was used wrongly (e.g. an unusable base URL).
    #[error("invalid client use: {0}")]
    Usage(String),
}

impl ClientError {
    /// The HTTP status, for [`ClientError::Http`].
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server's error name (`NotFoundError`, …), for [`ClientError::Http`].
    pub fn error_name(&self) -> Option<&str> {
        match self {
            Self::Http { name, .. } => name.as_deref(),
            _ => None,
        }
    }

    /// Whether this is a 404 `NotFoundError` (or another `*NotFoundError`).
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }

    pub(crate) fn transport(r: &Redactor, what: &str, err: &dyn std::fmt::Display) -> Self {
        Self::Transport {
            what: r.redact(what),
            message: r.redact(&err.to_string()),
        }
    }

    pub(crate) fn decode(r: &Redactor, what: &str, path: &str, message: &str) -> Self {
        Self::Decode {
            what: r.redact(what),
            path: r.redact(path),
            message: r.redact(message),
        }
    }

    /// Builds an `Http` error from a status and a raw body (`{name, data:{message}}` if JSON).
    pub(crate) fn http(r: &Redactor, what: &str, status: u16, body: &str) -> Self {
        let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
        let name = parsed
            .as_ref()
            .and_then(|v| v.get("name"))
            .and_then(|n| n.as_str())
            .map(str::to_string);
        let message = parsed
            .as_ref()
            .and_then(|v| {
                v.pointer("/data/message")
                    .or_else(|| v.get("message"))
                    .and_then(|m| m.as_str())
                    .map(str::to_string)
            })
            .unwrap_or_else(|| truncate(body, 500));
        Self::Http {
            what: r.redact(what),
            status,
            name: name.map(|n| r.redact(&n)),
            message: r.redact(&message),
        }
    }
}

/// Cuts `text` to at most `max` bytes on a char boundary, marking the cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &text[..end], text.len())
}

/// Decodes JSON text as `T`, reporting the JSON path of the first mismatch.
pub(crate) fn decode_str<T: serde::de::DeserializeOwned>(
    r: &Redactor,
    what: &str,
    text: &str,
) -> Result<T, ClientError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de)
        .map_err(|e| ClientError::decode(r, what, &e.path().to_string(), &e.inner().to_string()))
}
