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
    /// Who recorded it, when, and with what verdict; absent in cassettes recorded before
    /// cassettes kept it (they replay, saying their provenance is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) provenance: Option<Provenance>,
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

/// Where a recording came from: what a replay and a verifying run compare themselves with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Provenance {
    /// The OpenCode version that sent the requests, as its server reported itself (else its
    /// npm package's); `None` when neither could be read.
    pub(crate) opencode: Option<String>,
    /// The model as configured (`TEST_OLLAMA_MODEL`).
    pub(crate) model: String,
    /// The `model` names the upstream's responses gave, each once, in order.
    pub(crate) upstream_models: Vec<String>,
    /// The UTC date of the recording, `YYYY-MM-DD`.
    pub(crate) date: String,
    /// The harness that recorded it (`harness-runtime`'s version).
    pub(crate) harness: String,
    /// The verdict of the run that recorded it.
    pub(crate) verdict: Verdict,
}

/// How a scenario's run ended, as a cassette keeps it and a verifying run compares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "outcome", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Verdict {
    /// The body passed.
    Passed,
    /// The body skipped (the model did not exercise the capability).
    Skipped {
        /// The skip's reason, redacted.
        reason: String,
    },
    /// The body or its end failed.
    Failed,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Verdict::Passed => f.write_str("passed"),
            Verdict::Skipped { reason } => write!(f, "skipped ({reason})"),
            Verdict::Failed => f.write_str("failed"),
        }
    }
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
    /// OpenAI's Responses API (`POST {baseURL}/responses`, SSE with event names).
    #[serde(rename = "openai-responses")]
    Responses,
    /// Anthropic's Messages API (`POST {baseURL}/messages`, SSE with event names).
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Google Gemini (`POST {baseURL}/models/<model>:streamGenerateContent?alt=sse`, SSE).
    #[serde(rename = "gemini")]
    Gemini,
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

    fn provenance() -> Provenance {
        Provenance {
            opencode: Some("1.18.33".into()),
            model: "gemma3:270m".into(),
            upstream_models: vec!["gemma-3-270m-it-Q4_K_M.gguf".into()],
            date: "2026-12-02".into(),
            harness: "0.1.0".into(),
            verdict: Verdict::Skipped {
                reason: "the model did not call the bash tool".into(),
            },
        }
    }

    #[test]
    fn provenance_round_trips_and_refuses_unknown_fields() {
        let value = serde_json::to_value(provenance()).unwrap();
        assert_eq!(
            value["verdict"],
            json!({"outcome": "skipped", "reason": "the model did not call the bash tool"})
        );
        assert_eq!(
            serde_json::from_value::<Provenance>(value.clone()).unwrap(),
            provenance()
        );
        for verdict in [Verdict::Passed, Verdict::Failed] {
            let text = serde_json::to_string(&verdict).unwrap();
            assert_eq!(serde_json::from_str::<Verdict>(&text).unwrap(), verdict);
        }
        let mut typo = value;
        typo["dated"] = json!("2026-12-01");
        let error = serde_json::from_value::<Provenance>(typo).unwrap_err();
        assert!(error.to_string().contains("dated"), "{error}");
    }

    /// A cassette recorded before provenance reads as one without it, and is written back
    /// without the field.
    #[test]
    fn a_cassette_without_provenance_reads_and_writes_without_it() {
        let old = json!({
            "format": 1, "scenario": "t::x",
            "recorded": {"api": "openai", "npm": "p", "model": "m", "model_entry": {}},
            "interactions": []
        });
        let cassette: Cassette = serde_json::from_value(old.clone()).unwrap();
        assert_eq!(cassette.provenance, None);
        assert_eq!(serde_json::to_value(&cassette).unwrap(), old);
        let mut with = cassette;
        with.provenance = Some(provenance());
        let text = serde_json::to_string(&with).unwrap();
        assert_eq!(serde_json::from_str::<Cassette>(&text).unwrap(), with);
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
