//! What each chat API says, read per API: a request's matching key, which streamed frame
//! carries the model's output (its first token), the usage a response reports, the structure of
//! an answer (for `verify`), whether a stream ended as the API ends a whole answer, and which
//! strings of a frame are streamed text (redacted as the text they form).
//!
//! One file per API: `chat` (OpenAI chat completions and Ollama, the two the harness began
//! with), `anthropic` (Messages), `responses` (OpenAI Responses), `gemini`
//! (`streamGenerateContent?alt=sse`). This module only dispatches.

mod anthropic;
mod chat;
mod gemini;
mod read;
mod responses;

use serde_json::Value;

use super::format::{Chunk, NormalizedRequest, WireApi};
use crate::client::TokenCounts;
use crate::redact::Redactor;

/// The structure of an answer, without its words: what `verify` compares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The tools it called, in order.
    pub(crate) tools: Vec<String>,
    /// Whether it wrote text (not only whitespace).
    pub(crate) text: bool,
    /// Whether it carried an error (a mid-stream error frame, an error object).
    pub(crate) error: bool,
    /// Its finish reason as the API names it (`stop`, `end_turn`, `STOP`, `completed`).
    pub(crate) finish: Option<String>,
}

/// The request body `raw`, sent to `path` (path and query: Gemini names the model and the
/// streaming mode there) on `api`, as its matching key; every string redacted with `redactor`.
pub(crate) fn normalize(
    api: WireApi,
    path: &str,
    raw: &Value,
    redactor: &Redactor,
) -> NormalizedRequest {
    match api {
        WireApi::OpenAi | WireApi::Ollama => chat::normalize(api, raw, redactor),
        WireApi::Anthropic => anthropic::normalize(raw, redactor),
        WireApi::Responses => responses::normalize(raw, redactor),
        WireApi::Gemini => gemini::normalize(path, raw, redactor),
    }
}

/// Whether the streamed frame `data` (SSE event `event`) of `api` carries model output: text,
/// reasoning or a tool call. What a stream's first token is timed by.
pub(crate) fn carries_output(api: WireApi, event: Option<&str>, data: &Value) -> bool {
    match api {
        WireApi::OpenAi | WireApi::Ollama => crate::model::carries_output(data),
        WireApi::Anthropic => anthropic::carries_output(data),
        WireApi::Responses => responses::carries_output(event, data),
        WireApi::Gemini => gemini::carries_output(data),
    }
}

/// The tokens the payloads of one answer (a stream's frames in order, or a whole body) report;
/// `None` when none reports usage. `input` counts the prompt tokens not read from the cache,
/// `output` the answer's without its reasoning (so `total()` counts each token once).
pub(crate) fn usage<'a>(
    api: WireApi,
    payloads: impl IntoIterator<Item = &'a Value>,
) -> Option<TokenCounts> {
    let mut found = None;
    for payload in payloads {
        let read = match api {
            WireApi::OpenAi | WireApi::Ollama => chat::usage(payload),
            WireApi::Anthropic => anthropic::usage(payload, found),
            WireApi::Responses => responses::usage(payload),
            WireApi::Gemini => gemini::usage(payload),
        };
        // Every API reports running or final totals, never increments: the last one counts.
        found = read.or(found);
    }
    found
}

/// The structure of an answer whose payloads are `payloads` (a stream's frames, or a body).
pub(crate) fn shape<'a>(api: WireApi, payloads: impl IntoIterator<Item = &'a Value>) -> Shape {
    let mut shape = Shape::default();
    for payload in payloads {
        match api {
            WireApi::OpenAi | WireApi::Ollama => chat::shape(payload, &mut shape),
            WireApi::Anthropic => anthropic::shape(payload, &mut shape),
            WireApi::Responses => responses::shape(payload, &mut shape),
            WireApi::Gemini => gemini::shape(payload, &mut shape),
        }
    }
    shape
}

/// Whether a stream's frames end the way `api` ends a whole answer: OpenAI's `[DONE]`, Ollama's
/// `"done": true`, Anthropic's `message_stop`, Responses' `response.completed` (or
/// `response.incomplete`: whole, if cut by a limit), Gemini's last frame with a
/// `finishReason`. A stream the upstream closed without it was cut short.
pub(crate) fn ends_whole(api: WireApi, chunks: &[Chunk]) -> bool {
    let Some(last) = chunks.last() else {
        return false;
    };
    match api {
        WireApi::OpenAi => last.data == Value::String("[DONE]".into()),
        WireApi::Ollama => last.data.get("done") == Some(&Value::Bool(true)),
        WireApi::Anthropic => read::kind(last.event.as_deref(), &last.data) == "message_stop",
        WireApi::Responses => matches!(
            read::kind(last.event.as_deref(), &last.data),
            "response.completed" | "response.incomplete"
        ),
        WireApi::Gemini => gemini::finish_reason(&last.data).is_some(),
    }
}

/// The name of the streamed text the string at `path` of frame `data` belongs to, when it is a
/// piece of one (a delta); `None` for a string that comes whole.
pub(crate) fn stream_of(api: WireApi, data: &Value, path: &[String]) -> Option<String> {
    match api {
        WireApi::OpenAi | WireApi::Ollama => chat::stream_of(path),
        WireApi::Anthropic => anthropic::stream_of(data, path),
        WireApi::Responses => responses::stream_of(data, path),
        WireApi::Gemini => gemini::stream_of(path),
    }
}
