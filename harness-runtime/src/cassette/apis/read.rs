//! Readers the per-API files share.

use serde_json::Value;

use crate::redact::Redactor;

/// A frame's kind: its `type` field (Anthropic's and Responses' frames name themselves), else
/// its SSE event name; empty when neither says.
pub(super) fn kind<'a>(event: Option<&'a str>, data: &'a Value) -> &'a str {
    data.get("type")
        .and_then(Value::as_str)
        .or(event)
        .unwrap_or_default()
}

/// The count at `pointer`, when it is a whole number.
pub(super) fn count(value: &Value, pointer: &str) -> Option<u64> {
    value.pointer(pointer).and_then(Value::as_u64)
}

/// The string at `key`, when non-empty.
pub(super) fn non_empty<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
}

/// The items of the array at `key`, none when it is missing or not an array.
pub(super) fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Text content as the three APIs send it: a string, or parts whose `text` fields are joined by
/// newlines (other parts, images or tool results, add nothing).
pub(super) fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Whether `content` holds text: a string, or a part with a `text` field.
pub(super) fn has_text(content: Option<&Value>) -> bool {
    match content {
        Some(Value::String(_)) => true,
        Some(Value::Array(parts)) => parts.iter().any(|part| part.get("text").is_some()),
        _ => false,
    }
}

/// A tool's result as the matching key keeps it: text as it is, anything else as compact JSON;
/// redacted.
pub(super) fn result_text(result: &Value, redactor: &Redactor) -> String {
    let text = match result {
        Value::String(text) => text.clone(),
        Value::Array(_) => text_of(Some(result)),
        other => other.to_string(),
    };
    redactor.redact(&text)
}

/// Counts tokens as [`TokenCounts`](crate::client::TokenCounts) does from what an API reports:
/// `prompt` (with `cached` of it read from the cache), `answer` (with `reasoning` of it), and
/// the tokens `written` to the cache.
pub(super) fn tokens(
    prompt: u64,
    cached: u64,
    answer: u64,
    reasoning: u64,
    written: u64,
) -> crate::client::TokenCounts {
    crate::client::TokenCounts {
        input: prompt.saturating_sub(cached),
        output: answer.saturating_sub(reasoning),
        reasoning,
        cache_read: cached,
        cache_write: written,
    }
}

/// The names of the offered tools (`tools[].name`; a provider's built-in tool without one by
/// its `type`), redacted.
pub(super) fn tool_names(raw: &Value, redactor: &Redactor) -> Vec<String> {
    items(raw, "tools")
        .iter()
        .filter_map(|tool| non_empty(tool, "name").or_else(|| non_empty(tool, "type")))
        .map(|name| redactor.redact(name))
        .collect()
}
