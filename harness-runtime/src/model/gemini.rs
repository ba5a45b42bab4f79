//! Google Gemini's wire format, as `@ai-sdk/google` parses it: `data:` frames of whole
//! `GenerateContentResponse`s (text parts in pieces, a function call in one part), the last with
//! `finishReason`, each with `usageMetadata`.

use axum::http::StatusCode;
use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::openai::Meta;
use super::reply::{Body, MidStreamEnd, Reply, ScriptedToolCall};

fn sse(value: &Value) -> Step {
    Step::Frame(Bytes::from(format!("data: {value}\n\n")))
}

fn usage(reply: &Reply) -> Value {
    let mut usage = json!({
        "promptTokenCount": reply.usage.input,
        "candidatesTokenCount": reply.usage.output,
        "totalTokenCount": reply.usage.input + reply.usage.output,
    });
    if let Some(cached) = reply.usage.cached {
        usage["cachedContentTokenCount"] = json!(cached);
    }
    usage
}

/// Gemini says `STOP` after function calls too; `MAX_TOKENS` at the output limit.
fn finish_reason(reply: &Reply) -> &'static str {
    if reply.at_output_limit {
        "MAX_TOKENS"
    } else {
        "STOP"
    }
}

fn chunk(reply: &Reply, meta: &Meta<'_>, parts: Vec<Value>, finish: Option<&str>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = json!(finish);
    }
    json!({
        "candidates": [candidate],
        "usageMetadata": usage(reply),
        "modelVersion": meta.model,
        "responseId": format!("scripted-{}", meta.seq),
    })
}

fn call_part(call: &ScriptedToolCall) -> Value {
    json!({"functionCall": {"name": call.name, "args": call.arguments}})
}

/// Gemini's (Google RPC's) error object, as it answers a failed request and ends a failed
/// stream.
pub(crate) fn error(status: StatusCode, rpc_status: &str, message: &str) -> Value {
    json!({"error": {"code": status.as_u16(), "message": message, "status": rpc_status}})
}

/// The SSE steps of a streamed reply (not for `HttpError`/`Reset`, answered before the body).
pub(crate) fn stream_steps(reply: &Reply, meta: &Meta<'_>) -> Vec<Step> {
    let mut steps = Vec::new();
    if let Some(hold) = &reply.hold {
        steps.push(Step::Hold(hold.clone()));
    }
    match &reply.body {
        Body::Answer { text, calls } => {
            let mut parts: Vec<Vec<Value>> = reply
                .text_deltas(text)
                .into_iter()
                .map(|delta| vec![json!({"text": delta})])
                .collect();
            if !calls.is_empty() {
                parts.push(calls.iter().map(call_part).collect());
            }
            // The last chunk carries the finish reason with the last parts, as Gemini does.
            let last = parts.pop().unwrap_or_default();
            for part in parts {
                steps.push(sse(&chunk(reply, meta, part, None)));
            }
            steps.push(sse(&chunk(reply, meta, last, Some(finish_reason(reply)))));
        }
        Body::MidStream { text, end } => {
            for delta in reply.text_deltas(text) {
                steps.push(sse(&chunk(reply, meta, vec![json!({"text": delta})], None)));
            }
            match end {
                MidStreamEnd::ErrorChunk(message) => steps.push(sse(&error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "INTERNAL",
                    message,
                ))),
                MidStreamEnd::Abort => steps.push(Step::Abort),
            }
        }
        Body::Hang => steps.push(Step::Hang),
        Body::HttpError { .. } | Body::Reset => {}
    }
    steps
}

/// The JSON of a non-streamed reply (`:generateContent`).
pub(crate) fn completion(reply: &Reply, meta: &Meta<'_>) -> Value {
    let (text, calls): (&str, &[ScriptedToolCall]) = match &reply.body {
        Body::Answer { text, calls } => (text, calls),
        Body::MidStream { text, .. } => (text, &[]),
        _ => ("", &[]),
    };
    let mut parts = Vec::new();
    if !text.is_empty() {
        parts.push(json!({"text": text}));
    }
    parts.extend(calls.iter().map(call_part));
    chunk(reply, meta, parts, Some(finish_reason(reply)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::tests::rendered;

    const META: Meta<'static> = Meta {
        seq: 0,
        model: "m",
        created: 0,
    };

    #[test]
    fn text_streams_in_parts_and_the_last_chunk_finishes() {
        let reply = Reply::text("Hello there")
            .in_deltas(2)
            .with_cached_tokens(3);
        let frames = rendered(&stream_steps(&reply, &META));
        assert_eq!(frames.len(), 2);
        let parts: Vec<&Value> = frames
            .iter()
            .map(|(_, d)| &d["candidates"][0]["content"]["parts"][0]["text"])
            .collect();
        assert_eq!(parts, [&json!("Hello "), &json!("there")]);
        assert!(frames[0].1["candidates"][0].get("finishReason").is_none());
        assert_eq!(frames[1].1["candidates"][0]["finishReason"], "STOP");
        assert_eq!(
            frames[1].1["usageMetadata"],
            json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15,
                   "cachedContentTokenCount": 3})
        );
    }

    #[test]
    fn calls_come_whole_in_the_last_chunk() {
        let reply = Reply::tool_call("bash", json!({"command": "ls"})).with_text("Listing");
        let frames = rendered(&stream_steps(&reply, &META));
        assert_eq!(frames.len(), 2);
        assert_eq!(
            frames[1].1["candidates"][0]["content"]["parts"],
            json!([{"functionCall": {"name": "bash", "args": {"command": "ls"}}}])
        );
        let whole = completion(&reply.at_output_limit(), &META);
        assert_eq!(
            whole["candidates"][0]["content"]["parts"][0]["text"],
            "Listing"
        );
        assert_eq!(whole["candidates"][0]["finishReason"], "MAX_TOKENS");
    }

    #[test]
    fn a_failure_mid_stream_is_an_error_object() {
        let frames = rendered(&stream_steps(&Reply::error_mid_stream("p", "boom"), &META));
        assert_eq!(frames.last().unwrap().1["error"]["message"], "boom");
        assert_eq!(frames.last().unwrap().1["error"]["status"], "INTERNAL");
    }
}
