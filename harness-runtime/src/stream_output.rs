//! Which streamed frame of a chat answer carries the model's output (text, reasoning or a tool
//! call), read per API: what a stream's first token is timed by.
//!
//! A base module: the scripted model times its own streams as they go out (`model`), a
//! cassette times a recorded or relayed stream from its chunks (`cassette`); both read a frame
//! here, each picking the reader of its API (they name their APIs apart: `Api`, `WireApi`).

use serde_json::Value;

/// OpenAI chat completions' `choices[].delta`, or Ollama's `message`, with text, reasoning or
/// tool calls. A role-only first chunk, a finish or a usage chunk carries none.
pub(crate) fn chat(data: &Value) -> bool {
    let delta = data
        .get("choices")
        .and_then(Value::as_array)
        .is_some_and(|choices| {
            choices
                .iter()
                .filter_map(|c| c.get("delta"))
                .any(has_output)
        });
    delta || data.get("message").is_some_and(has_output)
}

/// Anthropic Messages: a `content_block_delta` with text, thinking or a tool's input, or the
/// start of a `tool_use` block (the call's name comes first, its input after) or of a block
/// with text already in it. `message_start`, `ping` and `message_delta` carry none.
pub(crate) fn anthropic(data: &Value) -> bool {
    match kind(None, data) {
        "content_block_delta" => data.get("delta").is_some_and(|delta| {
            ["text", "thinking", "partial_json"]
                .iter()
                .any(|field| non_empty(delta, field).is_some())
        }),
        "content_block_start" => data.get("content_block").is_some_and(|block| {
            kind(None, block).ends_with("tool_use") || non_empty(block, "text").is_some()
        }),
        _ => false,
    }
}

/// The Responses deltas that carry output: text, a tool call's arguments, reasoning, a refusal.
const RESPONSES_DELTAS: [&str; 5] = [
    "response.output_text.delta",
    "response.function_call_arguments.delta",
    "response.reasoning_summary_text.delta",
    "response.reasoning_text.delta",
    "response.refusal.delta",
];

/// OpenAI Responses (SSE event `event`, when the frame's `type` does not name it): a non-empty
/// delta of text, arguments or reasoning, or a function call's item being added (its name
/// comes first, its arguments after). `response.created` and the `*.done` events carry none.
pub(crate) fn responses(event: Option<&str>, data: &Value) -> bool {
    let name = kind(event, data);
    if RESPONSES_DELTAS.contains(&name) {
        return non_empty(data, "delta").is_some();
    }
    name == "response.output_item.added"
        && data
            .get("item")
            .is_some_and(|item| kind(None, item).ends_with("call"))
}

/// Gemini: a candidate's part with text (a thought's too) or a function call. The last frame,
/// with only a `finishReason` and usage, carries none.
pub(crate) fn gemini(data: &Value) -> bool {
    let mut parts = data
        .get("candidates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.pointer("/content/parts").and_then(Value::as_array))
        .flatten();
    parts.any(|part| non_empty(part, "text").is_some() || part.get("functionCall").is_some())
}

/// Whether a streamed frame as sent (an SSE event, its `event:` name and `data:` lines, or an
/// NDJSON line) carries output, as `carries` (one of the readers above) reads its payloads.
pub(crate) fn frame_carries_output(
    frame: &[u8],
    carries: impl Fn(Option<&str>, &Value) -> bool,
) -> bool {
    let Ok(text) = std::str::from_utf8(frame) else {
        return false;
    };
    let event = text
        .lines()
        .find_map(|line| line.strip_prefix("event:"))
        .map(str::trim);
    text.lines()
        .map(|line| line.strip_prefix("data:").map_or(line, str::trim_start))
        .filter_map(|payload| serde_json::from_str::<Value>(payload).ok())
        .any(|data| carries(event, &data))
}

/// A frame's kind: its `type` field (Anthropic's and Responses' frames name themselves), else
/// its SSE event name; empty when neither says.
fn kind<'a>(event: Option<&'a str>, data: &'a Value) -> &'a str {
    data.get("type")
        .and_then(Value::as_str)
        .or(event)
        .unwrap_or_default()
}

/// The string at `key`, when non-empty.
fn non_empty<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// Whether an OpenAI delta or an Ollama message has text, reasoning or tool calls.
fn has_output(delta: &Value) -> bool {
    [
        "content",
        "reasoning_content",
        "reasoning",
        "thinking",
        "tool_calls",
    ]
    .iter()
    .any(|field| match delta.get(field) {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        _ => false,
    })
}
