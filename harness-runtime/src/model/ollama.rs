//! Ollama's native API (`/api/chat` NDJSON, `/api/tags`, `/api/version`), so the scripted
//! model can stand in for an Ollama server.

use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::reply::{Body, MidStreamEnd, Reply};

/// The version reported by `GET /api/version`.
const VERSION: &str = "0.6.0";
/// A fixed timestamp: replies are deterministic.
const CREATED_AT: &str = "2025-01-01T00:00:00Z";

fn line(value: &Value) -> Step {
    Step::Frame(Bytes::from(format!("{value}\n")))
}

fn message(model: &str, content: &str, tool_calls: Option<Value>, done: bool) -> Value {
    let mut msg = json!({"role": "assistant", "content": content});
    if let Some(calls) = tool_calls {
        msg["tool_calls"] = calls;
    }
    json!({"model": model, "created_at": CREATED_AT, "message": msg, "done": done})
}

fn done_fields(value: &mut Value, reply: &Reply) {
    value["done_reason"] = json!("stop");
    value["total_duration"] = json!(1_000_000);
    value["prompt_eval_count"] = json!(reply.usage.input);
    value["eval_count"] = json!(reply.usage.output);
}

fn tool_calls(reply: &Reply) -> Option<Value> {
    match &reply.body {
        Body::Answer { calls, .. } if !calls.is_empty() => Some(
            calls
                .iter()
                .map(|c| json!({"function": {"name": c.name, "arguments": c.arguments}}))
                .collect(),
        ),
        _ => None,
    }
}

/// The NDJSON steps of a streamed `/api/chat` reply.
pub(crate) fn stream_steps(reply: &Reply, model: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some(hold) = &reply.hold {
        steps.push(Step::Hold(hold.clone()));
    }
    match &reply.body {
        Body::Answer { text, .. } => {
            for delta in reply.text_deltas(text) {
                steps.push(line(&message(model, &delta, None, false)));
            }
            if let Some(calls) = tool_calls(reply) {
                steps.push(line(&message(model, "", Some(calls), false)));
            }
            let mut last = message(model, "", None, true);
            done_fields(&mut last, reply);
            steps.push(line(&last));
        }
        Body::MidStream { text, end } => {
            for delta in reply.text_deltas(text) {
                steps.push(line(&message(model, &delta, None, false)));
            }
            match end {
                MidStreamEnd::ErrorChunk(msg) => steps.push(line(&json!({"error": msg}))),
                MidStreamEnd::Abort => steps.push(Step::Abort),
            }
        }
        Body::Hang => steps.push(Step::Hang),
        Body::HttpError { .. } | Body::Reset => {}
    }
    steps
}

/// The JSON of a non-streamed `/api/chat` reply.
pub(crate) fn completion(reply: &Reply, model: &str) -> Value {
    let text = match &reply.body {
        Body::Answer { text, .. } | Body::MidStream { text, .. } => text.as_str(),
        _ => "",
    };
    let mut value = message(model, text, tool_calls(reply), true);
    done_fields(&mut value, reply);
    value
}

/// `GET /api/tags`.
pub(crate) fn tags(model: &str) -> Value {
    json!({"models": [{
        "name": model, "model": model, "modified_at": CREATED_AT, "size": 0,
        "digest": "0000000000000000000000000000000000000000000000000000000000000000",
        "details": {"format": "gguf", "family": "scripted", "parameter_size": "0", "quantization_level": "none"}
    }]})
}

/// `GET /api/version`.
pub(crate) fn version() -> Value {
    json!({"version": VERSION})
}
