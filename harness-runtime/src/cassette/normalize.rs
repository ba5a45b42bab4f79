//! A chat request reduced to its matching key: what decides the model's answer, with the
//! scenario's volatile values replaced by placeholders.
//!
//! The system prompt is left out (it holds the date and the workspace path, and OpenCode
//! rewrites it between versions); the offered tools' names stand for it. On the APIs that send
//! it apart from the messages (Anthropic's `system`, Responses' `instructions`, Gemini's
//! `systemInstruction`) not even its role is kept.

use serde_json::Value;

use super::apis;
use super::format::{NormalizedRequest, WireApi};
use crate::redact::Redactor;

/// The normalized form of the request body `raw` that came in on `api` at `path` (its path and
/// query), read per API ([`apis`]). `redactor` should number afresh
/// ([`Redactor::with_fresh_numbering`]), so the result does not depend on what the scenario
/// redacted before.
pub(crate) fn normalize(
    api: WireApi,
    path: &str,
    raw: &Value,
    redactor: &Redactor,
) -> NormalizedRequest {
    apis::normalize(api, path, raw, redactor)
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
            "/v1/chat/completions",
            &request("/tmp/root-a/workspace"),
            &redactor("/tmp/root-a/workspace").with_fresh_numbering(),
        );
        let b = normalize(
            WireApi::OpenAi,
            "/v1/chat/completions",
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
        let n = normalize(WireApi::Ollama, "/api/chat", &raw, &Redactor::default());
        assert!(n.stream);
        assert_eq!(n.response_format, Some(json!({"type": "object"})));
        assert!(
            !normalize(
                WireApi::OpenAi,
                "/v1/chat/completions",
                &raw,
                &Redactor::default()
            )
            .stream
        );
    }
}
