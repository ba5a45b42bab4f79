//! The cassette file's types: what was recorded, and how (format version 1).
//!
//! Pretty JSON, every struct `deny_unknown_fields`: a hand-edited typo is an error naming the
//! field, not a silently ignored key.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The format this harness writes and reads.
pub(crate) const FORMAT: u32 = 1;

/// One scenario's recorded model traffic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Cassette {
    /// [`FORMAT`].
    pub(crate) format: u32,
    /// `<topic>::<fn>`.
    pub(crate) scenario: String,
    /// Which provider and model answered.
    pub(crate) recorded: Recorded,
    /// Every request and its response, in arrival order.
    pub(crate) interactions: Vec<Interaction>,
}

/// The provider and model of a recording: what a replay's OpenCode config names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Recorded {
    /// The upstream's chat API.
    pub(crate) api: WireApi,
    /// The provider package OpenCode used (`@ai-sdk/openai-compatible`).
    pub(crate) npm: String,
    /// The model's name (`TEST_OLLAMA_MODEL`).
    pub(crate) model: String,
    /// `provider.<id>.models.<model>` of the user's config, without `options`/`headers`.
    pub(crate) model_entry: Value,
}

/// A chat API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum WireApi {
    /// OpenAI chat completions (`POST {baseURL}/chat/completions`, SSE).
    #[serde(rename = "openai")]
    OpenAi,
    /// Ollama's native chat (`POST {baseURL}/chat`, NDJSON).
    #[serde(rename = "ollama")]
    Ollama,
}

/// One request and what answered it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Interaction {
    /// The request, normalized (the matching key of a replay).
    pub(crate) request: NormalizedRequest,
    /// The response as it was streamed.
    pub(crate) response: RecordedResponse,
}

/// A request reduced to what decides the answer, every string redacted. Field order is the
/// order a miss names the first difference in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NormalizedRequest {
    /// The API it came in on.
    pub(crate) api: WireApi,
    /// The `model` field.
    pub(crate) model: String,
    /// Whether a stream was asked for.
    pub(crate) stream: bool,
    /// The offered tools' names, in order.
    pub(crate) tools: Vec<String>,
    /// `tool_choice` as sent.
    pub(crate) tool_choice: Option<Value>,
    /// `response_format` (OpenAI) or `format` (Ollama).
    pub(crate) response_format: Option<Value>,
    /// Every message's role, in order.
    pub(crate) roles: Vec<String>,
    /// The text of the last user message.
    pub(crate) last_user_text: Option<String>,
    /// The text of every `role: "tool"` message, in order.
    pub(crate) tool_results: Vec<String>,
}

/// What the upstream answered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum RecordedResponse {
    /// A streamed body (SSE or NDJSON, by `content_type`), chunk by chunk.
    Stream {
        /// The HTTP status.
        status: u16,
        /// The `content-type` header.
        content_type: String,
        /// `retry-after` / `retry-after-ms`, when sent.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// Every event or line, in order.
        chunks: Vec<Chunk>,
        /// How the stream ended.
        end: StreamEnd,
    },
    /// A whole body: a non-streamed answer, or an HTTP error.
    Body {
        /// The HTTP status.
        status: u16,
        /// The `content-type` header.
        content_type: String,
        /// `retry-after` / `retry-after-ms`, when sent.
        #[serde(default)]
        headers: BTreeMap<String, String>,
        /// The body: JSON when it parsed as JSON, else its text.
        body: Value,
    },
    /// No response at all: the upstream could not be reached, or closed the connection first.
    Dropped {
        /// What happened, for the reader.
        detail: String,
    },
}

/// One SSE event or NDJSON line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Chunk {
    /// Milliseconds since the previous chunk (the first: since the request), for the reader;
    /// a replay does not wait.
    pub(crate) after_ms: u64,
    /// The SSE event name, when not the default `message`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) event: Option<String>,
    /// The payload: JSON when it is an object or an array, else its text (`[DONE]`).
    pub(crate) data: Value,
}

/// How a streamed response ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StreamEnd {
    /// The upstream ended the body.
    Complete,
    /// The body broke mid-way (replayed as a broken body).
    Dropped,
    /// The client went away first (replayed by holding the stream open until it does).
    ClientClosed,
}

/// The stored form of a chunk's payload: JSON objects and arrays as JSON, anything else as text,
/// so [`chunk_text`] gives back the bytes' meaning exactly.
pub(crate) fn chunk_data(text: &str) -> Value {
    match serde_json::from_str::<Value>(text) {
        Ok(value @ (Value::Object(_) | Value::Array(_))) => value,
        _ => Value::String(text.to_owned()),
    }
}

/// The text a payload is sent as: JSON compactly, text as it is.
pub(crate) fn chunk_text(data: &Value) -> String {
    match data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payloads_round_trip_as_json_or_text() {
        for text in ["[DONE]", "42", "\"quoted\"", r#"{"a":[1,2]}"#, "[1,2]", ""] {
            assert_eq!(chunk_text(&chunk_data(text)), text);
        }
        assert_eq!(chunk_data(r#"{"a":1}"#), json!({"a": 1}));
    }

    #[test]
    fn unknown_fields_are_refused_in_every_response_kind() {
        let ok = json!({"kind": "dropped", "detail": "x"});
        assert!(serde_json::from_value::<RecordedResponse>(ok).is_ok());
        let typo = json!({"kind": "dropped", "detail": "x", "detial": "y"});
        let error = serde_json::from_value::<RecordedResponse>(typo).unwrap_err();
        assert!(error.to_string().contains("detial"), "{error}");
        let stream = json!({"kind": "stream", "status": 200, "content_type": "text/event-stream",
                            "chunks": [], "end": "complete", "extra": 1});
        assert!(serde_json::from_value::<RecordedResponse>(stream).is_err());
    }
}
