//! OpenAI chat completions (SSE `data:` chunks, `[DONE]`) and Ollama's native chat (NDJSON
//! lines): the two APIs cassettes began with, read as they always were.

use serde_json::Value;

use super::Shape;
use super::read::{count, tokens};
use crate::cassette::format::{NormalizedRequest, WireApi};
use crate::cassette::scrub::redact_json;
use crate::chat_body;
use crate::client::TokenCounts;
use crate::redact::Redactor;

/// The matching key of a chat request: `messages` and their roles, the `role: "tool"` results,
/// the last user text; the system prompt only as its role.
pub(super) fn normalize(api: WireApi, raw: &Value, redactor: &Redactor) -> NormalizedRequest {
    let ollama = api == WireApi::Ollama;
    let text = |m: &Value| redactor.redact(&chat_body::text(m));
    let present = |v: Option<&Value>| v.map(|v| redact_json(redactor, v));
    let messages = chat_body::messages(raw);
    NormalizedRequest {
        api,
        model: redactor.redact(chat_body::model(raw)),
        stream: chat_body::stream(raw, ollama),
        tools: chat_body::tool_names(raw)
            .into_iter()
            .map(|name| redactor.redact(name))
            .collect(),
        tool_choice: present(chat_body::present(raw, "tool_choice")),
        response_format: present(chat_body::response_format(raw, ollama)),
        roles: messages.iter().map(chat_body::role).collect(),
        last_user_text: chat_body::last_user(raw).map(text),
        tool_results: messages
            .iter()
            .filter(|m| chat_body::has_role(m, "tool"))
            .map(text)
            .collect(),
    }
}

/// OpenAI's `usage` (`prompt_tokens`, `completion_tokens` and their details), or Ollama's last
/// line (`prompt_eval_count`, `eval_count`).
pub(super) fn usage(payload: &Value) -> Option<TokenCounts> {
    if let Some(usage) = payload.get("usage").filter(|u| u.is_object()) {
        let read = |pointer: &str| count(usage, pointer).unwrap_or(0);
        return Some(tokens(
            read("/prompt_tokens"),
            read("/prompt_tokens_details/cached_tokens"),
            read("/completion_tokens"),
            read("/completion_tokens_details/reasoning_tokens"),
            0,
        ));
    }
    let prompt = count(payload, "/prompt_eval_count");
    let answer = count(payload, "/eval_count");
    (prompt.is_some() || answer.is_some())
        .then(|| tokens(prompt.unwrap_or(0), 0, answer.unwrap_or(0), 0, 0))
}

/// An OpenAI body or chunk (`choices[0].message` or `.delta`, `finish_reason`), or an Ollama
/// line (`message`, `done_reason`).
pub(super) fn shape(payload: &Value, shape: &mut Shape) {
    let choice = payload.pointer("/choices/0");
    let message = choice
        .and_then(|c| c.get("delta").or_else(|| c.get("message")))
        .or_else(|| payload.get("message"));
    if let Some(message) = message {
        if message
            .get("content")
            .and_then(Value::as_str)
            .is_some_and(|content| !content.trim().is_empty())
        {
            shape.text = true;
        }
        let calls = message.get("tool_calls").and_then(Value::as_array);
        for call in calls.into_iter().flatten() {
            if let Some(name) = call.pointer("/function/name").and_then(Value::as_str) {
                if !name.is_empty() {
                    shape.tools.push(name.to_owned());
                }
            }
        }
    }
    let reason = choice
        .and_then(|c| c.get("finish_reason"))
        .or_else(|| payload.get("done_reason"))
        .and_then(Value::as_str);
    if let Some(reason) = reason {
        shape.finish = Some(reason.to_owned());
    }
    shape.error |= payload.get("error").is_some();
}

/// The text fields a delta streams piece by piece (ids, names and types come whole).
const STREAMED_FIELDS: [&str; 7] = [
    "content",
    "reasoning_content",
    "reasoning",
    "thinking",
    "text",
    "refusal",
    "arguments",
];

/// OpenAI's `…/delta/…/<field>` (content, reasoning, tool-call arguments: array items with an
/// `index` are named by it, so each call's arguments form their own text), Ollama's
/// `message/content` and `message/thinking`.
pub(super) fn stream_of(path: &[String]) -> Option<String> {
    let field = path.last()?;
    let in_delta = path.iter().any(|segment| segment == "delta");
    let ollama = matches!(path, [message, _] if message == "message");
    ((in_delta || ollama) && STREAMED_FIELDS.contains(&field.as_str())).then(|| path.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_and_ollama_usage_are_read() {
        let openai = json!({"choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 30,
            "prompt_tokens_details": {"cached_tokens": 60},
            "completion_tokens_details": {"reasoning_tokens": 10}}});
        assert_eq!(usage(&openai), Some(tokens(100, 60, 30, 10, 0)));
        let ollama = json!({"done": true, "prompt_eval_count": 12, "eval_count": 4});
        assert_eq!(usage(&ollama), Some(tokens(12, 0, 4, 0, 0)));
        assert_eq!(usage(&json!({"choices": [], "usage": null})), None);
    }
}
