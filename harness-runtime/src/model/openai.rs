//! The OpenAI chat-completions wire format, as `@ai-sdk/openai-compatible` parses it.

use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::reply::{Body, MidStreamEnd, Reply, ScriptedToolCall};

/// The backend configuration OpenAI (and llama.cpp, and Ollama) name in every chunk and
/// completion; one fixed value, as one server build sends.
const SYSTEM_FINGERPRINT: &str = "fp_scripted";

/// Ids and metadata shared by every chunk of one response.
pub(crate) struct Meta<'a> {
    pub(crate) seq: usize,
    pub(crate) model: &'a str,
    pub(crate) created: u64,
}

impl Meta<'_> {
    fn id(&self) -> String {
        format!("chatcmpl-scripted-{}", self.seq)
    }

    fn call_id(&self, index: usize) -> String {
        format!("call_scripted_{}_{}", self.seq, index)
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({
            "id": self.id(),
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "system_fingerprint": SYSTEM_FINGERPRINT,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    }
}

fn sse(value: &Value) -> Step {
    Step::Frame(Bytes::from(format!("data: {value}\n\n")))
}

fn usage(reply: &Reply) -> Value {
    let mut usage = json!({
        "prompt_tokens": reply.usage.input,
        "completion_tokens": reply.usage.output,
        "total_tokens": reply.usage.input + reply.usage.output,
    });
    if let Some(cached) = reply.usage.cached {
        usage["prompt_tokens_details"] = json!({"cached_tokens": cached});
    }
    usage
}

/// Splits a tool call's JSON arguments into fragments, as real providers stream them, so the
/// client has to accumulate them.
pub(crate) fn argument_fragments(call: &ScriptedToolCall) -> Vec<String> {
    let text = call.arguments.to_string();
    let pieces = if text.chars().count() >= 8 { 3 } else { 1 };
    super::reply::split_even(&text, pieces)
}

/// The SSE steps of a streamed reply (not for `HttpError`/`Reset`, answered before the body).
pub(crate) fn stream_steps(reply: &Reply, meta: &Meta<'_>, include_usage: bool) -> Vec<Step> {
    let mut steps = vec![sse(&meta.chunk(json!({"role": "assistant"}), None))];
    if let Some(hold) = &reply.hold {
        steps.push(Step::Hold(hold.clone()));
    }
    match &reply.body {
        Body::Answer { text, calls } => {
            for delta in reply.text_deltas(text) {
                steps.push(sse(&meta.chunk(json!({"content": delta}), None)));
            }
            for (index, call) in calls.iter().enumerate() {
                steps.push(sse(&meta.chunk(
                    json!({"tool_calls": [{
                        "index": index,
                        "id": meta.call_id(index),
                        "type": "function",
                        "function": {"name": call.name, "arguments": ""},
                    }]}),
                    None,
                )));
                for fragment in argument_fragments(call) {
                    steps.push(sse(&meta.chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}),
                        None,
                    )));
                }
            }
            steps.push(sse(&meta.chunk(json!({}), Some(reply.finish_reason()))));
            if include_usage {
                let mut last = meta.chunk(json!({}), None);
                last["choices"] = json!([]);
                last["usage"] = usage(reply);
                steps.push(sse(&last));
            }
            steps.push(Step::Frame(Bytes::from_static(b"data: [DONE]\n\n")));
        }
        Body::MidStream { text, end } => {
            for delta in reply.text_deltas(text) {
                steps.push(sse(&meta.chunk(json!({"content": delta}), None)));
            }
            match end {
                // The error object OpenAI answers a failed request with (a server error's
                // `code` is null), as one event.
                MidStreamEnd::ErrorChunk(message) => {
                    steps.push(sse(&error(message, "server_error", None)))
                }
                MidStreamEnd::Abort => steps.push(Step::Abort),
            }
        }
        Body::Hang => steps.push(Step::Hang),
        Body::HttpError { .. } | Body::Reset => {}
    }
    steps
}

/// The JSON of a non-streamed reply (`Answer` only; failures are handled by the server).
pub(crate) fn completion(reply: &Reply, meta: &Meta<'_>) -> Value {
    let (text, calls): (String, &[ScriptedToolCall]) = match &reply.body {
        Body::Answer { text, calls } => (text.clone(), calls),
        Body::MidStream { text, .. } => (text.clone(), &[]),
        _ => (String::new(), &[]),
    };
    // OpenAI sends `content: null` when the message is only tool calls.
    let content = if text.is_empty() && !calls.is_empty() {
        Value::Null
    } else {
        Value::String(text)
    };
    let mut message = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        message["tool_calls"] = calls
            .iter()
            .enumerate()
            .map(|(index, call)| {
                json!({
                    "id": meta.call_id(index),
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments.to_string()},
                })
            })
            .collect();
    }
    let finish = reply.finish_reason();
    json!({
        "id": meta.id(),
        "object": "chat.completion",
        "created": meta.created,
        "model": meta.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage(reply),
    })
}

/// One model's entry, as `GET /v1/models` lists it and `GET /v1/models/{id}` answers it.
pub(crate) fn model(id: &str) -> Value {
    json!({"id": id, "object": "model", "created": 0, "owned_by": "scripted"})
}

/// `GET /v1/models`.
pub(crate) fn models(id: &str) -> Value {
    json!({"object": "list", "data": [model(id)]})
}

/// OpenAI's error shape: `{"error":{"message","type","param","code"}}` (`param` is always
/// present, `null` here).
pub(crate) fn error(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_and_usage_follow_the_reply() {
        let meta = Meta {
            seq: 0,
            model: "m",
            created: 0,
        };
        let finish =
            |reply: &Reply| completion(reply, &meta)["choices"][0]["finish_reason"].clone();
        assert_eq!(finish(&Reply::text("x")), "stop");
        assert_eq!(finish(&Reply::tool_call("bash", json!({}))), "tool_calls");
        assert_eq!(
            finish(&Reply::tool_call("bash", json!({})).at_output_limit()),
            "length"
        );

        let usage = |reply: &Reply| completion(reply, &meta)["usage"].clone();
        assert!(
            usage(&Reply::text("x"))
                .get("prompt_tokens_details")
                .is_none()
        );
        let cached = Reply::text("x").with_usage(7, 2).with_cached_tokens(4);
        assert_eq!(
            usage(&cached),
            json!({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9,
                   "prompt_tokens_details": {"cached_tokens": 4}})
        );
    }
}
