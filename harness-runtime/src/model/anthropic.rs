//! Anthropic's Messages API wire format, as `@ai-sdk/anthropic` parses it: named SSE events
//! (`event: <name>\ndata: <json>\n\n`), content blocks opened, filled by deltas and closed.

use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::openai::Meta;
use super::reply::{Body, MidStreamEnd, Reply, ScriptedToolCall};

impl Meta<'_> {
    fn message_id(&self) -> String {
        format!("msg_scripted_{}", self.seq)
    }

    fn tool_use_id(&self, index: usize) -> String {
        format!("toolu_scripted_{}_{}", self.seq, index)
    }
}

fn event(name: &str, data: &Value) -> Step {
    Step::Frame(Bytes::from(format!("event: {name}\ndata: {data}\n\n")))
}

/// Anthropic's `stop_reason` for the reply.
fn stop_reason(reply: &Reply) -> &'static str {
    match reply.finish_reason() {
        "length" => "max_tokens",
        "tool_calls" => "tool_use",
        _ => "end_turn",
    }
}

/// The input side of `usage`: Anthropic's `input_tokens` leaves out the tokens read from the
/// cache, which it reports apart (`@ai-sdk/anthropic` adds them back).
fn input_usage(reply: &Reply) -> Value {
    let cached = reply.usage.cached.unwrap_or(0);
    let mut usage = json!({"input_tokens": reply.usage.input.saturating_sub(cached)});
    if let Some(cached) = reply.usage.cached {
        usage["cache_read_input_tokens"] = json!(cached);
    }
    usage
}

fn message(
    reply: &Reply,
    meta: &Meta<'_>,
    content: Value,
    stop: Option<&str>,
    output: u64,
) -> Value {
    let mut usage = input_usage(reply);
    usage["output_tokens"] = json!(output);
    json!({
        "id": meta.message_id(),
        "type": "message",
        "role": "assistant",
        "model": meta.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": usage,
    })
}

fn text_block(index: usize, reply: &Reply, text: &str) -> Vec<Step> {
    let mut steps = vec![event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "text", "text": ""}}),
    )];
    for delta in reply.text_deltas(text) {
        steps.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": delta}}),
        ));
    }
    steps
}

fn stop_block(index: usize) -> Step {
    event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": index}),
    )
}

fn tool_block(index: usize, id: String, call: &ScriptedToolCall) -> Vec<Step> {
    let mut steps = vec![event(
        "content_block_start",
        &json!({"type": "content_block_start", "index": index,
                "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
    )];
    for fragment in super::openai::argument_fragments(call) {
        steps.push(event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": fragment}}),
        ));
    }
    steps.push(stop_block(index));
    steps
}

/// Anthropic's error object, `{"type":"error","error":{"type","message"}}`.
pub(crate) fn error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// The SSE steps of a streamed reply (not for `HttpError`/`Reset`, answered before the body).
pub(crate) fn stream_steps(reply: &Reply, meta: &Meta<'_>) -> Vec<Step> {
    let start = message(reply, meta, json!([]), None, 1);
    let mut steps = vec![
        event(
            "message_start",
            &json!({"type": "message_start", "message": start}),
        ),
        event("ping", &json!({"type": "ping"})),
    ];
    if let Some(hold) = &reply.hold {
        steps.push(Step::Hold(hold.clone()));
    }
    match &reply.body {
        Body::Answer { text, calls } => {
            let mut index = 0;
            if !text.is_empty() {
                steps.extend(text_block(index, reply, text));
                steps.push(stop_block(index));
                index += 1;
            }
            for (n, call) in calls.iter().enumerate() {
                steps.extend(tool_block(index + n, meta.tool_use_id(n), call));
            }
            steps.push(event(
                "message_delta",
                &json!({"type": "message_delta",
                        "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null},
                        "usage": {"output_tokens": reply.usage.output}}),
            ));
            steps.push(event("message_stop", &json!({"type": "message_stop"})));
        }
        Body::MidStream { text, end } => {
            if !text.is_empty() {
                steps.extend(text_block(0, reply, text));
            }
            match end {
                // What Anthropic sends when it fails mid-answer (an overload, most often).
                MidStreamEnd::ErrorChunk(message) => {
                    steps.push(event("error", &error("api_error", message)))
                }
                MidStreamEnd::Abort => steps.push(Step::Abort),
            }
        }
        Body::Hang => steps.push(Step::Hang),
        Body::HttpError { .. } | Body::Reset => {}
    }
    steps
}

/// The JSON of a non-streamed reply.
pub(crate) fn completion(reply: &Reply, meta: &Meta<'_>) -> Value {
    let (text, calls): (&str, &[ScriptedToolCall]) = match &reply.body {
        Body::Answer { text, calls } => (text, calls),
        Body::MidStream { text, .. } => (text, &[]),
        _ => ("", &[]),
    };
    let mut content = Vec::new();
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for (n, call) in calls.iter().enumerate() {
        content.push(
            json!({"type": "tool_use", "id": meta.tool_use_id(n), "name": call.name,
                            "input": call.arguments}),
        );
    }
    message(
        reply,
        meta,
        Value::Array(content),
        Some(stop_reason(reply)),
        reply.usage.output,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::tests::rendered;

    const META: Meta<'static> = Meta {
        seq: 2,
        model: "m",
        created: 0,
    };

    #[test]
    fn a_text_reply_streams_one_text_block_between_start_and_stop() {
        let reply = Reply::text("Hello there").in_deltas(2).with_usage(7, 3);
        let frames = rendered(&stream_steps(&reply, &META));
        let names: Vec<&str> = frames.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(frames[0].1["message"]["usage"]["input_tokens"], 7);
        assert_eq!(
            frames[3].1["delta"],
            json!({"type": "text_delta", "text": "Hello "})
        );
        assert_eq!(frames[6].1["delta"]["stop_reason"], "end_turn");
        assert_eq!(frames[6].1["usage"], json!({"output_tokens": 3}));
    }

    #[test]
    fn a_tool_call_streams_its_input_in_json_fragments() {
        let reply = Reply::tool_call("bash", json!({"command": "ls -la"}))
            .with_text("Listing")
            .with_cached_tokens(4);
        let frames = rendered(&stream_steps(&reply, &META));
        assert_eq!(
            frames[0].1["message"]["usage"],
            json!({"input_tokens": 6, "cache_read_input_tokens": 4, "output_tokens": 1})
        );
        let tool = frames
            .iter()
            .find(|(_, d)| d["content_block"]["type"] == "tool_use")
            .expect("a tool_use block");
        assert_eq!(tool.1["index"], 1);
        assert_eq!(tool.1["content_block"]["name"], "bash");
        let input: String = frames
            .iter()
            .filter_map(|(_, d)| d["delta"]["partial_json"].as_str())
            .collect();
        assert_eq!(input, r#"{"command":"ls -la"}"#);
        let end = frames.iter().find(|(n, _)| n == "message_delta").unwrap();
        assert_eq!(end.1["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn failures_end_the_stream_as_anthropic_does() {
        let frames = rendered(&stream_steps(
            &Reply::error_mid_stream("par", "overloaded"),
            &META,
        ));
        let last = frames.last().unwrap();
        assert_eq!(last.0, "error");
        assert_eq!(last.1, error("api_error", "overloaded"));
        assert!(frames.iter().all(|(n, _)| n != "message_stop"));
        let cut = Reply::text("x").at_output_limit();
        assert_eq!(completion(&cut, &META)["stop_reason"], "max_tokens");
        let call = completion(&Reply::tool_call("bash", json!({"a": 1})), &META);
        assert_eq!(call["content"][0]["input"], json!({"a": 1}));
        assert_eq!(call["stop_reason"], "tool_use");
    }
}
