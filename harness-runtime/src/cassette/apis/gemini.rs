//! Google Gemini: `POST …/models/<model>:streamGenerateContent?alt=sse`, streamed as unnamed SSE
//! frames, each a whole `GenerateContentResponse` (`candidates[].content.parts[]`, and
//! `usageMetadata` as running totals); the last one has a `finishReason`. The model and the
//! streaming mode are in the path, not the body.

use serde_json::{Map, Value};

use super::Shape;
use super::read::{count, items, non_empty, result_text, tokens};
use crate::cassette::format::{NormalizedRequest, WireApi};
use crate::cassette::scrub::redact_json;
use crate::chat_body;
use crate::client::TokenCounts;
use crate::redact::Redactor;

/// The `generationConfig` fields that ask for structured output.
const FORMAT_FIELDS: [&str; 3] = ["responseMimeType", "responseSchema", "responseJsonSchema"];

/// The matching key: the `contents` and their roles, every `functionResponse` part, the last
/// user content's text, the function declarations offered; not `systemInstruction`.
pub(super) fn normalize(path: &str, raw: &Value, redactor: &Redactor) -> NormalizedRequest {
    let contents = items(raw, "contents");
    let parts = |content: &Value| items(content, "parts").to_vec();
    let text = |content: &Value| {
        let texts: Vec<&str> = items(content, "parts")
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| texts.join("\n"))
    };
    let format: Map<String, Value> = FORMAT_FIELDS
        .iter()
        .filter_map(|field| {
            let value = raw.pointer(&format!("/generationConfig/{field}"))?;
            Some(((*field).to_owned(), redact_json(redactor, value)))
        })
        .collect();
    NormalizedRequest {
        api: WireApi::Gemini,
        model: redactor.redact(model(path).unwrap_or_else(|| chat_body::model(raw))),
        stream: path.contains(":streamGenerateContent"),
        tools: items(raw, "tools")
            .iter()
            .flat_map(tool_names)
            .map(|name| redactor.redact(&name))
            .collect(),
        tool_choice: chat_body::present(raw, "toolConfig").map(|v| redact_json(redactor, v)),
        response_format: (!format.is_empty()).then_some(Value::Object(format)),
        roles: contents
            .iter()
            .map(|c| non_empty(c, "role").unwrap_or("user").to_owned())
            .collect(),
        last_user_text: contents
            .iter()
            .rev()
            .filter(|c| non_empty(c, "role").unwrap_or("user") == "user")
            .find_map(text)
            .map(|text| redactor.redact(&text)),
        tool_results: contents
            .iter()
            .flat_map(parts)
            .filter_map(|part| {
                let response = part.get("functionResponse")?;
                Some(result_text(
                    response.get("response").unwrap_or(&Value::Null),
                    redactor,
                ))
            })
            .collect(),
    }
}

/// The model a path names: `…/models/<model>:<method>`.
fn model(path: &str) -> Option<&str> {
    let path = path.split('?').next()?;
    let (_, rest) = path.rsplit_once("/models/")?;
    Some(rest.split(':').next().unwrap_or(rest)).filter(|m| !m.is_empty())
}

/// A tool's names: each of its `functionDeclarations`, or the built-in tool it is
/// (`googleSearch`, `codeExecution`) by its key.
fn tool_names(tool: &Value) -> Vec<String> {
    if let Some(declarations) = tool.get("functionDeclarations").and_then(Value::as_array) {
        return declarations
            .iter()
            .filter_map(|d| non_empty(d, "name").map(str::to_owned))
            .collect();
    }
    tool.as_object()
        .map(|object| object.keys().cloned().collect())
        .unwrap_or_default()
}

/// The parts of every candidate of a frame.
fn parts(data: &Value) -> impl Iterator<Item = &Value> {
    items(data, "candidates")
        .iter()
        .filter_map(|c| c.pointer("/content/parts").and_then(Value::as_array))
        .flatten()
}

/// `usageMetadata`: `promptTokenCount` with `cachedContentTokenCount` of it,
/// `candidatesTokenCount` and, apart from it, `thoughtsTokenCount`.
pub(super) fn usage(payload: &Value) -> Option<TokenCounts> {
    if let Value::Array(frames) = payload {
        // A whole body may be the stream's frames in one array.
        return frames.iter().rev().find_map(usage);
    }
    let usage = payload.get("usageMetadata").filter(|u| u.is_object())?;
    let read = |pointer: &str| count(usage, pointer).unwrap_or(0);
    let thoughts = read("/thoughtsTokenCount");
    Some(tokens(
        read("/promptTokenCount"),
        read("/cachedContentTokenCount"),
        read("/candidatesTokenCount") + thoughts,
        thoughts,
        0,
    ))
}

/// The first candidate's `finishReason`, when the frame has one.
pub(super) fn finish_reason(data: &Value) -> Option<&str> {
    items(data, "candidates")
        .iter()
        .find_map(|c| non_empty(c, "finishReason"))
}

/// Function calls, text (not thoughts), the finish reason, an `error` object.
pub(super) fn shape(payload: &Value, shape: &mut Shape) {
    if let Value::Array(frames) = payload {
        return frames.iter().for_each(|frame| self::shape(frame, shape));
    }
    for part in parts(payload) {
        if let Some(name) = part.get("functionCall").and_then(|c| non_empty(c, "name")) {
            shape.tools.push(name.to_owned());
        }
        let thought = part.get("thought").and_then(Value::as_bool) == Some(true);
        shape.text |= !thought
            && part
                .get("text")
                .and_then(Value::as_str)
                .is_some_and(|text| !text.trim().is_empty());
    }
    if let Some(reason) = finish_reason(payload) {
        shape.finish = Some(reason.to_owned());
    }
    shape.error |= payload.get("error").is_some();
}

/// A part's `text`: one text per candidate, whichever part carries it.
pub(super) fn stream_of(path: &[String]) -> Option<String> {
    match path {
        [candidates, candidate, content, parts, _, text]
            if candidates == "candidates"
                && content == "content"
                && parts == "parts"
                && text == "text" =>
        {
            Some(format!("candidates/{candidate}/text"))
        }
        _ => None,
    }
}
