//! What the scripted model answers: text, tool calls, structured output, failures and holds.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;

use super::error::ModelError;

/// The tool OpenCode adds when a prompt carries a `json_schema` format.
pub(crate) const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// One function call in a reply.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ScriptedToolCall {
    /// The tool's name as offered, e.g. `bash`.
    pub name: String,
    /// The arguments object, sent as JSON text in fragments.
    pub arguments: Value,
}

impl ScriptedToolCall {
    /// A call of `name` with `arguments` (usually a JSON object).
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            name: name.into(),
            arguments,
        }
    }
}

/// Token counts reported with a reply (when the client asks for usage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Usage {
    /// Prompt tokens.
    pub input: u64,
    /// Completion tokens.
    pub output: u64,
    /// How many of the prompt tokens were read from the prompt cache, reported as OpenAI's
    /// `usage.prompt_tokens_details.cached_tokens`; `None` reports no details, as Ollama's
    /// OpenAI API does (llama.cpp and OpenAI report them).
    pub cached: Option<u64>,
}

impl Default for Usage {
    fn default() -> Self {
        Self {
            input: 10,
            output: 5,
            cached: None,
        }
    }
}

/// How a reply that fails mid-stream ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum MidStreamEnd {
    /// An `{"error":{…}}` chunk, then the stream ends without `[DONE]`.
    ErrorChunk(String),
    /// The body is cut off: the connection closes in the middle of the chunked body.
    Abort,
}

/// The shape of a reply.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Body {
    /// Text (possibly empty) and tool calls; `finish_reason` follows from the calls.
    Answer {
        text: String,
        calls: Vec<ScriptedToolCall>,
    },
    /// A non-2xx answer with this JSON body, and `retry-after-ms` / `Retry-After` headers when
    /// set.
    HttpError {
        status: u16,
        body: Value,
        retry_after_ms: Option<u64>,
        retry_after_secs: Option<u64>,
    },
    /// Some text deltas, then a failure.
    MidStream { text: String, end: MidStreamEnd },
    /// The connection is dropped without a response.
    Reset,
    /// Headers and the role chunk, then nothing until the client gives up.
    Hang,
}

/// One scripted answer to one model request. Build with the constructors, refine with the
/// `with_*`/`in_deltas`/`slow`/`stalled` methods.
///
/// ```
/// use harness_runtime::model::Reply;
/// let reply = Reply::text("Hello from the scripted model").in_deltas(3);
/// ```
#[derive(Clone, Debug)]
pub struct Reply {
    pub(crate) body: Body,
    pub(crate) deltas: usize,
    pub(crate) delay: Option<Duration>,
    pub(crate) hold: Option<Hold>,
    pub(crate) usage: Usage,
    /// Ends as a model cut off by its output token limit (`finish_reason: "length"`).
    pub(crate) at_output_limit: bool,
}

impl Reply {
    fn of(body: Body) -> Self {
        Self {
            body,
            deltas: 1,
            delay: None,
            hold: None,
            usage: Usage::default(),
            at_output_limit: false,
        }
    }

    /// A text answer (`finish_reason: "stop"`), sent as one content delta.
    pub fn text(text: impl Into<String>) -> Self {
        Self::of(Body::Answer {
            text: text.into(),
            calls: Vec::new(),
        })
    }

    /// One call of tool `name` with `arguments` (`finish_reason: "tool_calls"`). The request
    /// it answers must offer `name`; otherwise the model answers 400 and the scenario fails.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::tool_calls(vec![ScriptedToolCall::new(name, arguments)])
    }

    /// Several tool calls in one response, in this order.
    pub fn tool_calls(calls: Vec<ScriptedToolCall>) -> Self {
        Self::of(Body::Answer {
            text: String::new(),
            calls,
        })
    }

    /// The answer to a `json_schema` format prompt: a call of OpenCode's `StructuredOutput`
    /// tool with `value` as its arguments; OpenCode puts it in the message's `info.structured`.
    pub fn structured(value: Value) -> Self {
        Self::tool_call(STRUCTURED_OUTPUT_TOOL, value)
    }

    /// An HTTP error `status` with `body` (any JSON; a string is sent as a JSON string).
    pub fn http_error(status: u16, body: impl Into<Value>) -> Self {
        Self::of(Body::HttpError {
            status,
            body: body.into(),
            retry_after_ms: None,
            retry_after_secs: None,
        })
    }

    /// Sends a `retry-after-ms` header with an HTTP error (ignored by other replies). OpenCode
    /// waits that long before retrying a retryable error (5xx, 429) instead of its 2 to 30 s
    /// backoff, so a scenario can let it exhaust its retries in well under a second.
    pub fn with_retry_after_ms(mut self, ms: u64) -> Self {
        if let Body::HttpError { retry_after_ms, .. } = &mut self.body {
            *retry_after_ms = Some(ms);
        }
        self
    }

    /// Sends a `Retry-After: <secs>` header with an HTTP error (ignored by other replies): the
    /// standard header, in whole seconds, that rate-limited providers send.
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        if let Body::HttpError {
            retry_after_secs, ..
        } = &mut self.body
        {
            *retry_after_secs = Some(secs);
        }
        self
    }

    /// A stream that sends `partial_text` as content deltas, then an error chunk carrying
    /// `message`, and ends without `[DONE]` (what a provider failing mid-answer sends).
    pub fn error_mid_stream(partial_text: impl Into<String>, message: impl Into<String>) -> Self {
        Self::of(Body::MidStream {
            text: partial_text.into(),
            end: MidStreamEnd::ErrorChunk(message.into()),
        })
    }

    /// A stream that sends `partial_text` as content deltas, then breaks the connection in
    /// the middle of the body.
    pub fn abort_mid_stream(partial_text: impl Into<String>) -> Self {
        Self::of(Body::MidStream {
            text: partial_text.into(),
            end: MidStreamEnd::Abort,
        })
    }

    /// The connection is reset (TCP RST) without any response.
    pub fn reset() -> Self {
        Self::of(Body::Reset)
    }

    /// Response headers and the role chunk, then nothing, until the client disconnects or the
    /// scenario ends (a model that never answers).
    pub fn hang() -> Self {
        Self::of(Body::Hang)
    }

    /// An empty text answer held until released: see [`Reply::stalled`].
    pub fn stall() -> (Self, StallHandle) {
        Self::text("").stalled()
    }

    /// Holds this reply until the returned handle is released: a streamed reply sends its
    /// headers and role chunk first (the model "is thinking"), anything else waits before its
    /// first byte. Releasing before the request arrives lets it through at once; dropping the
    /// handle unreleased holds it until the client disconnects or the scenario ends.
    pub fn stalled(mut self) -> (Self, StallHandle) {
        let (release_tx, release_rx) = watch::channel(false);
        let (reached_tx, reached_rx) = watch::channel(false);
        self.hold = Some(Hold {
            release: release_rx,
            reached: Arc::new(reached_tx),
        });
        (
            self,
            StallHandle {
                release: release_tx,
                reached: reached_rx,
            },
        )
    }

    /// Splits the text into `n` content deltas of about equal size (at least one).
    pub fn in_deltas(mut self, n: usize) -> Self {
        self.deltas = n.max(1);
        self
    }

    /// Waits `delay` before every chunk after the first (a slow model).
    pub fn slow(mut self, delay: Duration) -> Self {
        self.delay = Some(delay);
        self
    }

    /// Adds text before the tool calls of this reply (ignored by failures).
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        match &mut self.body {
            Body::Answer { text: t, .. } | Body::MidStream { text: t, .. } => *t = text.into(),
            _ => {}
        }
        self
    }

    /// The token counts reported in `usage`.
    pub fn with_usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Usage {
            input,
            output,
            ..self.usage
        };
        self
    }

    /// Reports `tokens` of the prompt as read from the prompt cache
    /// (`usage.prompt_tokens_details.cached_tokens`, as llama.cpp and OpenAI send it; Ollama's
    /// native API has no such count).
    pub fn with_cached_tokens(mut self, tokens: u64) -> Self {
        self.usage.cached = Some(tokens);
        self
    }

    /// Ends the answer as a model does that reached its output token limit (OpenCode's
    /// `max_tokens`): `finish_reason: "length"` (Ollama: `done_reason: "length"`) instead of
    /// `stop` or `tool_calls`. What a small local model capped by its config sends.
    pub fn at_output_limit(mut self) -> Self {
        self.at_output_limit = true;
        self
    }

    /// The OpenAI `finish_reason` this reply's answer ends with.
    pub(crate) fn finish_reason(&self) -> &'static str {
        match &self.body {
            _ if self.at_output_limit => "length",
            Body::Answer { calls, .. } if !calls.is_empty() => "tool_calls",
            _ => "stop",
        }
    }

    /// A short description for diagnostics and evidence.
    pub fn describe(&self) -> String {
        let base = match &self.body {
            Body::Answer { text, calls } if calls.is_empty() => format!("text {text:?}"),
            Body::Answer { calls, .. } => {
                let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
                format!("tool calls [{}]", names.join(", "))
            }
            Body::HttpError { status, .. } => format!("http error {status}"),
            Body::MidStream {
                end: MidStreamEnd::ErrorChunk(_),
                ..
            } => "error mid-stream".to_string(),
            Body::MidStream {
                end: MidStreamEnd::Abort,
                ..
            } => "abort mid-stream".to_string(),
            Body::Reset => "connection reset".to_string(),
            Body::Hang => "hang".to_string(),
        };
        let base = if self.at_output_limit {
            format!("{base} (at output limit)")
        } else {
            base
        };
        if self.hold.is_some() {
            format!("{base} (stalled)")
        } else {
            base
        }
    }

    /// Splits `text` into the configured number of deltas, on char boundaries.
    pub(crate) fn text_deltas(&self, text: &str) -> Vec<String> {
        split_even(text, self.deltas)
    }
}

/// Splits `text` into at most `n` non-empty pieces of about equal length (none for "").
pub(crate) fn split_even(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let n = n.clamp(1, chars.len());
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// The server side of a stall: where the reply waits.
#[derive(Clone, Debug)]
pub(crate) struct Hold {
    release: watch::Receiver<bool>,
    reached: Arc<watch::Sender<bool>>,
}

impl Hold {
    /// Marks the stall as reached and waits for the release; cancel-safe (no state but the
    /// watch channels). An unreleased, dropped handle holds forever.
    pub(crate) async fn wait(&self) {
        self.reached.send_replace(true);
        let mut release = self.release.clone();
        if release.wait_for(|released| *released).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Controls a stalled reply: [`StallHandle::release`] lets it proceed.
#[derive(Debug)]
pub struct StallHandle {
    release: watch::Sender<bool>,
    reached: watch::Receiver<bool>,
}

impl StallHandle {
    /// Lets the held reply (and any later request answered by it) proceed.
    pub fn release(&self) {
        self.release.send_replace(true);
    }

    /// Whether a request has reached the stall.
    pub fn is_reached(&self) -> bool {
        *self.reached.borrow()
    }

    /// Waits, up to `ceiling`, until nothing can be held by this stall any more: its reply was
    /// served and the connection it was held on closed (its client went away) before the
    /// release. False when the ceiling came first.
    #[cfg(test)]
    pub(crate) async fn abandoned_within(&self, ceiling: Duration) -> bool {
        tokio::time::timeout(ceiling, self.release.closed())
            .await
            .is_ok()
    }

    /// Waits until a request is held by this stall, with a ceiling of 60 s (scaled by
    /// `LIVE_TIMEOUT_SCALE`).
    pub async fn reached(&self) -> Result<(), ModelError> {
        let ceiling = crate::settings::scaled(Duration::from_secs(60));
        let mut reached = self.reached.clone();
        match tokio::time::timeout(ceiling, reached.wait_for(|r| *r)).await {
            Ok(Ok(_)) => Ok(()),
            // The reply (and its sender) is gone: the script was dropped with the server.
            Ok(Err(_)) => Err(ModelError::Stopped {
                what: "waiting for a stalled reply to be requested".into(),
            }),
            Err(_) => Err(ModelError::Timeout {
                what: "a request reaching the stalled reply".into(),
                ceiling,
                pending: "no model request was held by this stall; check that the reply is queued \
                          where the agent's request will pick it up"
                    .into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_text_evenly_on_char_boundaries() {
        assert_eq!(split_even("abcdef", 3), vec!["ab", "cd", "ef"]);
        assert_eq!(split_even("héllo", 2), vec!["hél", "lo"]);
        assert_eq!(split_even("ab", 5), vec!["a", "b"]);
        assert!(split_even("", 3).is_empty());
    }

    #[tokio::test]
    async fn a_release_before_the_request_lets_it_through() {
        let (reply, handle) = Reply::text("x").stalled();
        handle.release();
        reply.hold.unwrap().wait().await;
        assert!(handle.is_reached());
    }
}
