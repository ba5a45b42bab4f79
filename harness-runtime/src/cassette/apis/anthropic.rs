//! Anthropic's Messages API: `POST /v1/messages`, streamed as named SSE events
//! (`message_start`, `content_block_start`/`_delta`/`_stop`, `ping`, `message_delta`,
//! `message_stop`, `error`), each frame's `type` naming it too.

use serde_json::Value;

use super::Shape;
use super::read::{count, has_text, items, kind, non_empty, result_text, text_of, tool_names};
use crate::cassette::format::{NormalizedRequest, WireApi};
use crate::cassette::scrub::redact_json;
use crate::chat_body;
use crate::client::TokenCounts;
use crate::redact::Redactor;

/// The matching key: `messages` and their roles, every `tool_result` block, the last user
/// message's text, the tools offered; not the top-level `system`.
pub(super) fn normalize(raw: &Value, redactor: &Redactor) -> NormalizedRequest {
    let messages = items(raw, "messages");
    let present = |key: &str| chat_body::present(raw, key).map(|v| redact_json(redactor, v));
    let blocks = |message: &Value| items(message, "content").to_vec();
    NormalizedRequest {
        api: WireApi::Anthropic,
        model: redactor.redact(chat_body::model(raw)),
        stream: chat_body::stream(raw, false),
        tools: tool_names(raw, redactor),
        tool_choice: present("tool_choice"),
        response_format: present("output_format"),
        roles: messages.iter().map(chat_body::role).collect(),
        // A user message of tool results only is the tool's answer, not the user's words.
        last_user_text: messages
            .iter()
            .rev()
            .find(|m| chat_body::has_role(m, "user") && has_text(m.get("content")))
            .map(|m| redactor.redact(&text_of(m.get("content")))),
        tool_results: messages
            .iter()
            .flat_map(blocks)
            .filter(|block| kind(None, block) == "tool_result")
            .map(|block| result_text(block.get("content").unwrap_or(&Value::Null), redactor))
            .collect(),
    }
}

/// `message_start`'s `message.usage` (input and cache counts), then each `message_delta`'s
/// `usage` (the running output count, and any input count it restates) over what `before`
/// held; a whole `message` body's `usage`. Anthropic's `input_tokens` leaves the cache's out.
pub(super) fn usage(payload: &Value, before: Option<TokenCounts>) -> Option<TokenCounts> {
    let usage = match kind(None, payload) {
        "message_start" => payload.pointer("/message/usage"),
        "message_delta" | "message" => payload.get("usage"),
        _ => None,
    }
    .filter(|usage| usage.is_object())?;
    let before = before.unwrap_or_default();
    let read = |pointer: &str, was: u64| count(usage, pointer).unwrap_or(was);
    Some(TokenCounts {
        input: read("/input_tokens", before.input),
        output: read("/output_tokens", before.output),
        // Anthropic counts thinking as output and reports no share of it.
        reasoning: 0,
        cache_read: read("/cache_read_input_tokens", before.cache_read),
        cache_write: read("/cache_creation_input_tokens", before.cache_write),
    })
}

/// Tool calls from `tool_use` blocks, text from text deltas, the finish from `message_delta`'s
/// `stop_reason`, an error from an `error` frame; a whole `message` body alike.
pub(super) fn shape(payload: &Value, shape: &mut Shape) {
    match kind(None, payload) {
        "content_block_start" => payload
            .get("content_block")
            .into_iter()
            .for_each(|block| block_shape(block, shape)),
        "content_block_delta" => payload
            .get("delta")
            .into_iter()
            .for_each(|delta| block_shape(delta, shape)),
        "message" => items(payload, "content")
            .iter()
            .for_each(|block| block_shape(block, shape)),
        "error" => shape.error = true,
        _ => {}
    }
    let reason = payload
        .pointer("/delta/stop_reason")
        .or_else(|| payload.get("stop_reason"))
        .and_then(Value::as_str);
    if let Some(reason) = reason {
        shape.finish = Some(reason.to_owned());
    }
}

/// A content block or its delta: a tool call by its name, text when not blank.
fn block_shape(block: &Value, shape: &mut Shape) {
    if kind(None, block).ends_with("tool_use") {
        if let Some(name) = non_empty(block, "name") {
            shape.tools.push(name.to_owned());
        }
    }
    shape.text |= block
        .get("text")
        .and_then(Value::as_str)
        .is_some_and(|text| !text.trim().is_empty());
}

/// A `content_block_delta`'s `delta.text`, `delta.thinking` or `delta.partial_json`: one text
/// per content block (`index`) and field.
pub(super) fn stream_of(data: &Value, path: &[String]) -> Option<String> {
    let [delta, field] = path else {
        return None;
    };
    let streamed = ["text", "thinking", "partial_json"].contains(&field.as_str());
    (delta == "delta" && streamed && kind(None, data) == "content_block_delta").then(|| {
        let index = count(data, "/index").unwrap_or(0);
        format!("{index}/{field}")
    })
}
