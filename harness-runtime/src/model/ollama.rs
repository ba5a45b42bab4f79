//! Ollama's native API (`/api/chat` NDJSON, `/api/tags`, `/api/show`, `/api/ps`,
//! `/api/version`), so the scripted model can stand in for an Ollama server.

use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::reply::{Body, MidStreamEnd, Reply};

/// The version reported by `GET /api/version`.
const VERSION: &str = "0.6.0";
/// A fixed timestamp: replies are deterministic.
const CREATED_AT: &str = "2025-01-01T00:00:00Z";
/// When the loaded model unloads: never, as Ollama reports a model kept loaded with
/// `keep_alive: -1` (a far-future time).
const EXPIRES_AT: &str = "2318-01-01T00:00:00Z";
/// The digest of the one model served.
const DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";
/// The context length `/api/show` and `/api/ps` report (OpenCode's config says the same).
const CONTEXT_LENGTH: u64 = 128_000;

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
    // Ollama says `stop` for tool calls too; `length` when the output limit cut the answer.
    let done_reason = if reply.at_output_limit {
        "length"
    } else {
        "stop"
    };
    value["done_reason"] = json!(done_reason);
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

fn details() -> Value {
    json!({
        "parent_model": "", "format": "gguf", "family": "scripted", "families": ["scripted"],
        "parameter_size": "0", "quantization_level": "none",
    })
}

/// Whether `name`, as a client sends it, names `model` (Ollama adds the `:latest` tag).
pub(crate) fn names(name: &str, model: &str) -> bool {
    name == model || name.strip_suffix(":latest") == Some(model)
}

/// `GET /api/tags`.
pub(crate) fn tags(model: &str) -> Value {
    json!({"models": [{
        "name": model, "model": model, "modified_at": CREATED_AT, "size": 0,
        "digest": DIGEST, "details": details(),
    }]})
}

/// `POST /api/show` for the served model.
pub(crate) fn show(model: &str) -> Value {
    json!({
        "modelfile": format!("# the scripted model: its answers are scripted by the scenario\nFROM {model}\n"),
        "parameters": "",
        "template": "{{ .Prompt }}",
        "details": details(),
        "model_info": {
            "general.architecture": "scripted",
            "general.parameter_count": 0,
            "scripted.context_length": CONTEXT_LENGTH,
        },
        "capabilities": ["completion", "tools"],
        "modified_at": CREATED_AT,
    })
}

/// `GET /api/ps`: the served model, loaded for good.
pub(crate) fn ps(model: &str) -> Value {
    json!({"models": [{
        "name": model, "model": model, "size": 0, "digest": DIGEST, "details": details(),
        "expires_at": EXPIRES_AT, "size_vram": 0, "context_length": CONTEXT_LENGTH,
    }]})
}

/// `GET /api/version`.
pub(crate) fn version() -> Value {
    json!({"version": VERSION})
}

/// Ollama's error shape: `{"error":"…"}`.
pub(crate) fn error_body(message: &str) -> Value {
    json!({"error": message})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_done_reason_is_length_only_at_the_output_limit() {
        let cut = Reply::text("x").at_output_limit();
        assert_eq!(completion(&cut, "m")["done_reason"], "length");
        let call = Reply::tool_call("bash", json!({}));
        assert_eq!(completion(&call, "m")["done_reason"], "stop");
    }
}
