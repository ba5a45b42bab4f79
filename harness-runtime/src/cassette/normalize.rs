//! A chat request reduced to its matching key: what decides the model's answer, with the
//! scenario's volatile values replaced by placeholders.
//!
//! The system prompt is left out (it holds the date and the workspace path, and OpenCode
//! rewrites it between versions); the offered tools' names stand for it.

use serde_json::Value;

use super::format::{NormalizedRequest, WireApi};
use super::scrub::redact_json;
use crate::redact::Redactor;

/// The normalized form of the request body `raw` that came in on `api`. `redactor` should
/// number afresh ([`Redactor::with_fresh_numbering`]), so the result does not depend on what
/// the scenario redacted before.
pub(crate) fn normalize(api: WireApi, raw: &Value, redactor: &Redactor) -> NormalizedRequest {
    let messages: &[Value] = raw
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let role = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let text = |m: &Value| redactor.redact(&message_text(m.get("content")));
    let present = |key: &str| {
        raw.get(key)
            .filter(|v| !v.is_null())
            .map(|v| redact_json(redactor, v))
    };
    NormalizedRequest {
        api,
        model: redactor.redact(raw.get("model").and_then(Value::as_str).unwrap_or_default()),
        // Ollama streams unless told not to; OpenAI only when asked.
        stream: raw
            .get("stream")
            .and_then(Value::as_bool)
            .unwrap_or(api == WireApi::Ollama),
        tools: raw
            .get("tools")
            .and_then(Value::as_array)
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|t| {
                        t.pointer("/function/name")
                            .or_else(|| t.get("name"))
                            .and_then(Value::as_str)
                            .map(|name| redactor.redact(name))
                    })
                    .collect()
            })
            .unwrap_or_default(),
        tool_choice: present("tool_choice"),
        response_format: present(match api {
            WireApi::OpenAi => "response_format",
            WireApi::Ollama => "format",
        }),
        roles: messages.iter().map(role).collect(),
        last_user_text: messages
            .iter()
            .rev()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .map(text),
        tool_results: messages
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(text)
            .collect(),
    }
}

/// The text of a message's `content`: a string, or the `text` of its parts joined by newlines.
pub(crate) fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn request(workspace: &str) -> Value {
        json!({
            "model": "gemma3:270m", "stream": true, "tool_choice": "auto",
            "tools": [{"type": "function", "function": {"name": "bash"}},
                      {"type": "function", "function": {"name": "read"}}],
            "messages": [
                {"role": "system", "content": format!("Today is 2026-01-02. cwd {workspace}")},
                {"role": "user", "content": [{"type": "text", "text": format!("list {workspace}")}]},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "call_abc123"}]},
                {"role": "tool", "tool_call_id": "call_abc123", "content": "a.txt call_zzz999"},
            ]
        })
    }

    fn redactor(workspace: &str) -> Redactor {
        let redactor = Redactor::default();
        redactor.add_path(Path::new(workspace), "[workspace]");
        // Ids the scenario saw before the request must not shift the request's numbering.
        redactor.redact("call_earlier1 call_earlier2");
        redactor
    }

    #[test]
    fn two_runs_in_different_roots_normalize_alike() {
        let a = normalize(
            WireApi::OpenAi,
            &request("/tmp/root-a/workspace"),
            &redactor("/tmp/root-a/workspace").with_fresh_numbering(),
        );
        let b = normalize(
            WireApi::OpenAi,
            &request("/tmp/root-b/workspace"),
            &redactor("/tmp/root-b/workspace").with_fresh_numbering(),
        );
        assert_eq!(a, b);
        assert_eq!(
            a,
            NormalizedRequest {
                api: WireApi::OpenAi,
                model: "gemma3:270m".into(),
                stream: true,
                tools: vec!["bash".into(), "read".into()],
                tool_choice: Some(json!("auto")),
                response_format: None,
                roles: vec![
                    "system".into(),
                    "user".into(),
                    "assistant".into(),
                    "tool".into()
                ],
                last_user_text: Some("list [workspace]".into()),
                tool_results: vec!["a.txt [call-1]".into()],
            }
        );
    }

    #[test]
    fn ollama_streams_by_default_and_names_its_format() {
        let raw = json!({"model": "m", "format": {"type": "object"}, "messages": []});
        let n = normalize(WireApi::Ollama, &raw, &Redactor::default());
        assert!(n.stream);
        assert_eq!(n.response_format, Some(json!({"type": "object"})));
        assert!(!normalize(WireApi::OpenAi, &raw, &Redactor::default()).stream);
    }
}
