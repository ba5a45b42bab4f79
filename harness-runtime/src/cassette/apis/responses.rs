//! OpenAI's Responses API: `POST /v1/responses`, streamed as named SSE events whose `type`
//! repeats the name (`response.created`, `response.output_item.added`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.completed`, `error`, …).

use serde_json::Value;

use super::Shape;
use super::read::{count, has_text, items, kind, non_empty, result_text, text_of, tool_names};
use crate::cassette::format::{NormalizedRequest, WireApi};
use crate::cassette::scrub::redact_json;
use crate::chat_body;
use crate::client::TokenCounts;
use crate::redact::Redactor;

/// The events that end a response, each carrying it whole (`response.usage` among it).
const ENDS: [&str; 3] = [
    "response.completed",
    "response.incomplete",
    "response.failed",
];

/// The matching key: the `input` items (a message by its `role`, anything else by its `type`:
/// `function_call`, `function_call_output`, `reasoning`), every `function_call_output`, the
/// last user message's text, the tools offered; not `instructions`.
pub(super) fn normalize(raw: &Value, redactor: &Redactor) -> NormalizedRequest {
    let present = |v: Option<&Value>| v.map(|v| redact_json(redactor, v));
    // `input` may be one string: the user's text.
    let one = raw
        .get("input")
        .and_then(Value::as_str)
        .map(|text| serde_json::json!([{"role": "user", "content": text}]));
    let input = one
        .as_ref()
        .map_or_else(|| items(raw, "input"), |v| items_of(v));
    NormalizedRequest {
        api: WireApi::Responses,
        model: redactor.redact(chat_body::model(raw)),
        stream: chat_body::stream(raw, false),
        tools: tool_names(raw, redactor),
        tool_choice: present(chat_body::present(raw, "tool_choice")),
        response_format: present(raw.pointer("/text/format").filter(|v| !v.is_null())),
        roles: input
            .iter()
            .map(|item| {
                non_empty(item, "role")
                    .or_else(|| non_empty(item, "type"))
                    .unwrap_or("?")
                    .to_owned()
            })
            .collect(),
        last_user_text: input
            .iter()
            .rev()
            .find(|item| chat_body::has_role(item, "user") && has_text(item.get("content")))
            .map(|item| redactor.redact(&text_of(item.get("content")))),
        tool_results: input
            .iter()
            .filter(|item| kind(None, item) == "function_call_output")
            .map(|item| result_text(item.get("output").unwrap_or(&Value::Null), redactor))
            .collect(),
    }
}

fn items_of(value: &Value) -> &[Value] {
    value.as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The usage of the response an ending event carries (or a whole body is): `input_tokens`
/// with `input_tokens_details.cached_tokens` of them, `output_tokens` with
/// `output_tokens_details.reasoning_tokens` of them.
pub(super) fn usage(payload: &Value) -> Option<TokenCounts> {
    let usage = response(payload)?.get("usage").filter(|u| u.is_object())?;
    let read = |pointer: &str| count(usage, pointer).unwrap_or(0);
    Some(super::read::tokens(
        read("/input_tokens"),
        read("/input_tokens_details/cached_tokens"),
        read("/output_tokens"),
        read("/output_tokens_details/reasoning_tokens"),
        0,
    ))
}

/// The response object of an ending event, or the body when it is one.
fn response(payload: &Value) -> Option<&Value> {
    if ENDS.contains(&kind(None, payload)) {
        return payload.get("response");
    }
    (payload.get("object").and_then(Value::as_str) == Some("response")).then_some(payload)
}

/// Tool calls from the function calls added, text from text deltas, the finish from the ending
/// event (`incomplete_details.reason`, else the status), an error from `error` or
/// `response.failed`; a whole body from its `output` items.
pub(super) fn shape(payload: &Value, shape: &mut Shape) {
    let name = kind(None, payload);
    match name {
        "response.output_item.added" => {
            if let Some(item) = payload.get("item") {
                item_shape(item, shape);
            }
        }
        "response.output_text.delta" => {
            shape.text |= payload
                .get("delta")
                .and_then(Value::as_str)
                .is_some_and(|text| !text.trim().is_empty());
        }
        _ => {}
    }
    if let Some(response) = response(payload) {
        if !ENDS.contains(&name) {
            // A whole body: its items were not streamed before it.
            for item in items(response, "output") {
                item_shape(item, shape);
            }
        }
        let reason = response
            .pointer("/incomplete_details/reason")
            .filter(|r| r.is_string())
            .or_else(|| response.get("status"))
            .and_then(Value::as_str);
        if let Some(reason) = reason {
            shape.finish = Some(reason.to_owned());
        }
    }
    shape.error |= matches!(name, "error" | "response.failed")
        || payload.get("error").is_some_and(|e| !e.is_null());
}

/// An output item: a call by its name, a message by whether its parts have text.
fn item_shape(item: &Value, shape: &mut Shape) {
    if kind(None, item).ends_with("call") {
        if let Some(name) = non_empty(item, "name") {
            shape.tools.push(name.to_owned());
        }
    }
    shape.text |= items(item, "content").iter().any(|part| {
        part.get("text")
            .and_then(Value::as_str)
            .is_some_and(|text| !text.trim().is_empty())
    });
}

/// The `delta` of an output event: one text per event kind, output item and part.
pub(super) fn stream_of(data: &Value, path: &[String]) -> Option<String> {
    let name = kind(None, data);
    (matches!(path, [delta] if delta == "delta") && name.ends_with(".delta")).then(|| {
        let index = |key: &str| count(data, &format!("/{key}")).unwrap_or(0);
        format!(
            "{name}/{}/{}/{}",
            index("output_index"),
            index("content_index"),
            index("summary_index")
        )
    })
}
