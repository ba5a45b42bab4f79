//! What each chat API says, read per API: a request's matching key, which streamed frame
//! carries the model's output (its first token: read in `crate::stream_output`, which the
//! scripted model shares), the usage a response reports, the structure of
//! an answer (for `verify`), whether a stream ended as the API ends a whole answer, and which
//! strings of a frame are streamed text (redacted as the text they form).
//!
//! One file per API: `chat` (OpenAI chat completions and Ollama, the two the harness began
//! with), `anthropic` (Messages), `responses` (OpenAI Responses), `gemini`
//! (`streamGenerateContent?alt=sse`). This module only dispatches.

mod anthropic;
mod chat;
mod gemini;
mod read;
mod responses;

use serde_json::Value;

use super::format::{Chunk, NormalizedRequest, WireApi};
use crate::client::TokenCounts;
use crate::redact::Redactor;
use crate::stream_output;

/// The structure of an answer, without its words: what `verify` compares.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Shape {
    /// The tools it called, in order.
    pub(crate) tools: Vec<String>,
    /// Whether it wrote text (not only whitespace).
    pub(crate) text: bool,
    /// Whether it carried an error (a mid-stream error frame, an error object).
    pub(crate) error: bool,
    /// Its finish reason as the API names it (`stop`, `end_turn`, `STOP`, `completed`).
    pub(crate) finish: Option<String>,
}

/// The request body `raw`, sent to `path` (path and query: Gemini names the model and the
/// streaming mode there) on `api`, as its matching key: what decides the model's answer, every
/// string redacted with `redactor`. `redactor` should number afresh
/// ([`Redactor::with_fresh_numbering`]), so the key does not depend on what the scenario
/// redacted before.
///
/// The system prompt is left out (it holds the date and the workspace path, and OpenCode
/// rewrites it between versions); the offered tools' names stand for it. On the APIs that send
/// it apart from the messages (Anthropic's `system`, Responses' `instructions`, Gemini's
/// `systemInstruction`) not even its role is kept.
pub(crate) fn normalize(
    api: WireApi,
    path: &str,
    raw: &Value,
    redactor: &Redactor,
) -> NormalizedRequest {
    match api {
        WireApi::OpenAi | WireApi::Ollama => chat::normalize(api, raw, redactor),
        WireApi::Anthropic => anthropic::normalize(raw, redactor),
        WireApi::Responses => responses::normalize(raw, redactor),
        WireApi::Gemini => gemini::normalize(path, raw, redactor),
    }
}

/// Whether the streamed frame `data` (SSE event `event`) of `api` carries model output: text,
/// reasoning or a tool call, as [`stream_output`] reads each API (the scripted model's streams
/// too). What a stream's first token is timed by.
pub(crate) fn carries_output(api: WireApi, event: Option<&str>, data: &Value) -> bool {
    match api {
        WireApi::OpenAi | WireApi::Ollama => stream_output::chat(data),
        WireApi::Anthropic => stream_output::anthropic(data),
        WireApi::Responses => stream_output::responses(event, data),
        WireApi::Gemini => stream_output::gemini(data),
    }
}

/// The tokens the payloads of one answer (a stream's frames in order, or a whole body) report;
/// `None` when none reports usage. `input` counts the prompt tokens not read from the cache,
/// `output` the answer's without its reasoning (so `total()` counts each token once).
pub(crate) fn usage<'a>(
    api: WireApi,
    payloads: impl IntoIterator<Item = &'a Value>,
) -> Option<TokenCounts> {
    let mut found = None;
    for payload in payloads {
        let read = match api {
            WireApi::OpenAi | WireApi::Ollama => chat::usage(payload),
            WireApi::Anthropic => anthropic::usage(payload, found),
            WireApi::Responses => responses::usage(payload),
            WireApi::Gemini => gemini::usage(payload),
        };
        // Every API reports running or final totals, never increments: the last one counts.
        found = read.or(found);
    }
    found
}

/// The structure of an answer whose payloads are `payloads` (a stream's frames, or a body).
pub(crate) fn shape<'a>(api: WireApi, payloads: impl IntoIterator<Item = &'a Value>) -> Shape {
    let mut shape = Shape::default();
    for payload in payloads {
        match api {
            WireApi::OpenAi | WireApi::Ollama => chat::shape(payload, &mut shape),
            WireApi::Anthropic => anthropic::shape(payload, &mut shape),
            WireApi::Responses => responses::shape(payload, &mut shape),
            WireApi::Gemini => gemini::shape(payload, &mut shape),
        }
    }
    shape
}

/// Whether a stream's frames end the way `api` ends a whole answer: OpenAI's `[DONE]`, Ollama's
/// `"done": true`, Anthropic's `message_stop`, Responses' `response.completed` (or
/// `response.incomplete`: whole, if cut by a limit), Gemini's last frame with a
/// `finishReason`. A stream the upstream closed without it was cut short.
pub(crate) fn ends_whole(api: WireApi, chunks: &[Chunk]) -> bool {
    let Some(last) = chunks.last() else {
        return false;
    };
    match api {
        WireApi::OpenAi => last.data == Value::String("[DONE]".into()),
        WireApi::Ollama => last.data.get("done") == Some(&Value::Bool(true)),
        WireApi::Anthropic => read::kind(last.event.as_deref(), &last.data) == "message_stop",
        WireApi::Responses => matches!(
            read::kind(last.event.as_deref(), &last.data),
            "response.completed" | "response.incomplete"
        ),
        WireApi::Gemini => gemini::finish_reason(&last.data).is_some(),
    }
}

/// The name of the streamed text the string at `path` of frame `data` belongs to, when it is a
/// piece of one (a delta); `None` for a string that comes whole.
pub(crate) fn stream_of(api: WireApi, data: &Value, path: &[String]) -> Option<String> {
    match api {
        WireApi::OpenAi | WireApi::Ollama => chat::stream_of(path),
        WireApi::Anthropic => anthropic::stream_of(data, path),
        WireApi::Responses => responses::stream_of(data, path),
        WireApi::Gemini => gemini::stream_of(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn redactor(workspace: &str) -> Redactor {
        let redactor = Redactor::default();
        redactor.add_path(Path::new(workspace), "[workspace]");
        redactor.with_fresh_numbering()
    }

    /// A tool turn's second request on `api`, from workspace `ws`, with `system` as its system
    /// prompt: the tools, the user's text, a tool call and its result.
    fn second_request(api: WireApi, ws: &str, system: &str) -> Value {
        match api {
            WireApi::Anthropic => json!({
                "model": "claude-sonnet-4-5", "stream": true, "system": system,
                "tools": [{"name": "bash"}, {"name": "read"}],
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": format!("list {ws}")}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_abc123",
                        "name": "bash", "input": {"command": "ls"}}]},
                    {"role": "user", "content": [{"type": "tool_result",
                        "tool_use_id": "toolu_abc123", "content": format!("{ws}/a.txt")}]},
                ],
            }),
            WireApi::Responses => json!({
                "model": "gpt-5", "stream": true, "instructions": system,
                "tools": [{"type": "function", "name": "bash"}, {"type": "function", "name": "read"}],
                "input": [
                    {"role": "user", "content": [{"type": "input_text", "text": format!("list {ws}")}]},
                    {"type": "function_call", "call_id": "call_abc123", "name": "bash",
                     "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "call_abc123",
                     "output": format!("{ws}/a.txt")},
                ],
            }),
            WireApi::Gemini => json!({
                "systemInstruction": {"parts": [{"text": system}]},
                "tools": [{"functionDeclarations": [{"name": "bash"}, {"name": "read"}]}],
                "contents": [
                    {"role": "user", "parts": [{"text": format!("list {ws}")}]},
                    {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {}}}]},
                    {"role": "user", "parts": [{"functionResponse": {"name": "bash",
                        "response": {"name": "bash", "content": format!("{ws}/a.txt")}}}]},
                ],
            }),
            WireApi::OpenAi | WireApi::Ollama => unreachable!("read by chat.rs"),
        }
    }

    const PATHS: [(WireApi, &str); 3] = [
        (WireApi::Anthropic, "/v1/messages"),
        (WireApi::Responses, "/v1/responses"),
        (
            WireApi::Gemini,
            "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        ),
    ];

    #[test]
    fn each_api_normalizes_alike_across_workspaces_and_system_prompts() {
        for (api, path) in PATHS {
            let normalized = |ws: &str, system: &str| {
                normalize(api, path, &second_request(api, ws, system), &redactor(ws))
            };
            let a = normalized(
                "/tmp/root-a/workspace",
                "Today is 2026-01-02. cwd /tmp/root-a",
            );
            let b = normalized("/tmp/root-b/workspace", "You are another prompt entirely.");
            assert_eq!(a, b, "{api:?}");
            assert_eq!(a.api, api);
            assert!(a.stream, "{api:?}");
            assert_eq!(a.tools, ["bash", "read"], "{api:?}");
            assert_eq!(
                a.last_user_text.as_deref(),
                Some("list [workspace]"),
                "{api:?}"
            );
            assert_eq!(a.tool_results.len(), 1, "{api:?}");
            assert!(
                a.tool_results[0].contains("[workspace]/a.txt"),
                "{api:?}: {:?}",
                a.tool_results
            );
            assert_eq!(a.roles.len(), 3, "{api:?}: {:?}", a.roles);
            let text = serde_json::to_string(&a).unwrap();
            assert!(
                !text.contains("prompt") && !text.contains("/tmp/"),
                "{text}"
            );
        }
    }

    #[test]
    fn the_shapes_of_each_api_are_named_in_its_own_terms() {
        let responses = normalize(
            WireApi::Responses,
            "/v1/responses",
            &second_request(WireApi::Responses, "/w", "s"),
            &Redactor::default(),
        );
        assert_eq!(
            responses.roles,
            ["user", "function_call", "function_call_output"]
        );
        let gemini = normalize(
            WireApi::Gemini,
            "/v1beta/models/gemini-2.5-flash:generateContent",
            &json!({"contents": [], "generationConfig": {"responseMimeType": "application/json"}}),
            &Redactor::default(),
        );
        assert_eq!(gemini.model, "gemini-2.5-flash");
        assert!(!gemini.stream, "generateContent is not streamed");
        assert_eq!(
            gemini.response_format,
            Some(json!({"responseMimeType": "application/json"}))
        );
        // A user turn of tool results only is not the user's text.
        let anthropic = second_request(WireApi::Anthropic, "/w", "s");
        let key = normalize(
            WireApi::Anthropic,
            "/v1/messages",
            &anthropic,
            &Redactor::default(),
        );
        assert_eq!(key.roles, ["user", "assistant", "user"]);
        assert_eq!(key.last_user_text.as_deref(), Some("list /w"));
    }

    #[test]
    fn the_first_token_is_the_first_frame_with_output_per_api() {
        let cases = [
            (
                WireApi::Anthropic,
                None,
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "hm"}}),
                true,
            ),
            (
                WireApi::Anthropic,
                None,
                json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": ""}}),
                false,
            ),
            (
                WireApi::Anthropic,
                None,
                json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "t", "name": "bash", "input": {}}}),
                true,
            ),
            (
                WireApi::Anthropic,
                None,
                json!({"type": "message_delta",
                "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}}),
                false,
            ),
            (
                WireApi::Responses,
                Some("response.function_call_arguments.delta"),
                json!({"delta": "{"}),
                true,
            ),
            (
                WireApi::Responses,
                None,
                json!({"type": "response.reasoning_summary_text.delta",
                "delta": "thinking"}),
                true,
            ),
            (
                WireApi::Responses,
                None,
                json!({"type": "response.output_text.done",
                "text": "Hi"}),
                false,
            ),
            (
                WireApi::Gemini,
                None,
                json!({"candidates": [{"content": {"parts": [
                {"functionCall": {"name": "bash", "args": {}}}]}}]}),
                true,
            ),
            (
                WireApi::Gemini,
                None,
                json!({"candidates": [{"content": {"parts": []},
                "finishReason": "STOP"}], "usageMetadata": {}}),
                false,
            ),
        ];
        for (api, event, data, carries) in cases {
            assert_eq!(carries_output(api, event, &data), carries, "{api:?} {data}");
        }
    }

    #[test]
    fn errors_are_shapes_and_cut_streams_do_not_end_whole() {
        let anthropic_error = json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}});
        assert!(shape(WireApi::Anthropic, [&anthropic_error]).error);
        let responses_error = json!({"type": "error", "code": "server_error", "message": "x"});
        assert!(shape(WireApi::Responses, [&responses_error]).error);
        let gemini_error = json!({"error": {"code": 500, "status": "INTERNAL"}});
        assert!(shape(WireApi::Gemini, [&gemini_error]).error);
        assert!(!ends_whole(WireApi::Responses, &[]));
    }

    fn chat_request(workspace: &str) -> Value {
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

    /// A redactor that has numbered ids before the request.
    fn seen_redactor(workspace: &str) -> Redactor {
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
            &chat_request("/tmp/root-a/workspace"),
            &seen_redactor("/tmp/root-a/workspace").with_fresh_numbering(),
        );
        let b = normalize(
            WireApi::OpenAi,
            "/v1/chat/completions",
            &chat_request("/tmp/root-b/workspace"),
            &seen_redactor("/tmp/root-b/workspace").with_fresh_numbering(),
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
