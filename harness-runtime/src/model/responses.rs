//! OpenAI's Responses API wire format, as `@ai-sdk/openai` parses it: named SSE events, each
//! with a `sequence_number`; output items (a message, function calls) added, filled by deltas
//! and done; `response.completed` (or `response.incomplete`) with the usage.

use bytes::Bytes;
use serde_json::{Value, json};

use super::frames::Step;
use super::openai::Meta;
use super::reply::{Body, MidStreamEnd, Reply, ScriptedToolCall};

impl Meta<'_> {
    fn response_id(&self) -> String {
        format!("resp_scripted_{}", self.seq)
    }

    fn message_item_id(&self) -> String {
        format!("msg_scripted_{}", self.seq)
    }

    fn function_item_id(&self, index: usize) -> String {
        format!("fc_scripted_{}_{}", self.seq, index)
    }
}

/// Numbers the events of one stream, as OpenAI does.
struct Events {
    steps: Vec<Step>,
    next: u64,
}

impl Events {
    fn push(&mut self, name: &str, mut data: Value) {
        data["type"] = json!(name);
        data["sequence_number"] = json!(self.next);
        self.next += 1;
        self.steps.push(Step::Frame(Bytes::from(format!(
            "event: {name}\ndata: {data}\n\n"
        ))));
    }
}

fn usage(reply: &Reply) -> Value {
    json!({
        "input_tokens": reply.usage.input,
        "input_tokens_details": {"cached_tokens": reply.usage.cached.unwrap_or(0)},
        "output_tokens": reply.usage.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.usage.input + reply.usage.output,
    })
}

fn message_item(meta: &Meta<'_>, text: &str, status: &str) -> Value {
    let content = if status == "completed" {
        json!([{"type": "output_text", "text": text, "annotations": []}])
    } else {
        json!([])
    };
    json!({"type": "message", "id": meta.message_item_id(), "status": status,
           "role": "assistant", "content": content})
}

fn function_item(meta: &Meta<'_>, index: usize, call: &ScriptedToolCall, done: bool) -> Value {
    let (arguments, status) = if done {
        (call.arguments.to_string(), "completed")
    } else {
        (String::new(), "in_progress")
    };
    json!({"type": "function_call", "id": meta.function_item_id(index),
           "call_id": format!("call_scripted_{}_{}", meta.seq, index),
           "name": call.name, "arguments": arguments, "status": status})
}

/// The response object; `output` and `usage` once it is over.
fn response(reply: &Reply, meta: &Meta<'_>, output: Value, done: bool) -> Value {
    let (status, incomplete) = match (done, reply.at_output_limit) {
        (false, _) => ("in_progress", Value::Null),
        (true, false) => ("completed", Value::Null),
        (true, true) => ("incomplete", json!({"reason": "max_output_tokens"})),
    };
    json!({
        "id": meta.response_id(),
        "object": "response",
        "created_at": meta.created,
        "model": meta.model,
        "status": status,
        // Every response object names its error, `null` but in `response.failed`.
        "error": Value::Null,
        "incomplete_details": incomplete,
        "output": output,
        "usage": if done { usage(reply) } else { Value::Null },
    })
}

/// The output items of a finished answer.
fn output(meta: &Meta<'_>, text: &str, calls: &[ScriptedToolCall]) -> Vec<Value> {
    let mut items = Vec::new();
    if !text.is_empty() {
        items.push(message_item(meta, text, "completed"));
    }
    items.extend(
        calls
            .iter()
            .enumerate()
            .map(|(n, call)| function_item(meta, n, call, true)),
    );
    items
}

fn text_deltas(events: &mut Events, reply: &Reply, meta: &Meta<'_>, text: &str) {
    events.push(
        "response.output_item.added",
        json!({"output_index": 0, "item": message_item(meta, "", "in_progress")}),
    );
    for delta in reply.text_deltas(text) {
        events.push(
            "response.output_text.delta",
            json!({"item_id": meta.message_item_id(), "output_index": 0, "content_index": 0,
                   "delta": delta, "logprobs": []}),
        );
    }
}

/// OpenAI's error event, as it ends a failed stream: the error nested, as OpenAI sends it (the
/// API reference shows it flat; the SDK reads both).
pub(crate) fn error_event(message: &str) -> Value {
    json!({"error": {"type": "server_error", "code": "server_error", "message": message,
                     "param": null}})
}

/// The SSE steps of a streamed reply (not for `HttpError`/`Reset`, answered before the body).
pub(crate) fn stream_steps(reply: &Reply, meta: &Meta<'_>) -> Vec<Step> {
    let mut events = Events {
        steps: Vec::new(),
        next: 0,
    };
    let created = response(reply, meta, json!([]), false);
    events.push("response.created", json!({"response": created}));
    if let Some(hold) = &reply.hold {
        events.steps.push(Step::Hold(hold.clone()));
    }
    match &reply.body {
        Body::Answer { text, calls } => {
            let mut index = 0;
            if !text.is_empty() {
                text_deltas(&mut events, reply, meta, text);
                events.push(
                    "response.output_item.done",
                    json!({"output_index": 0, "item": message_item(meta, text, "completed")}),
                );
                index += 1;
            }
            for (n, call) in calls.iter().enumerate() {
                let output_index = index + n;
                events.push(
                    "response.output_item.added",
                    json!({"output_index": output_index,
                           "item": function_item(meta, n, call, false)}),
                );
                for fragment in super::openai::argument_fragments(call) {
                    events.push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": meta.function_item_id(n),
                               "output_index": output_index, "delta": fragment}),
                    );
                }
                events.push(
                    "response.output_item.done",
                    json!({"output_index": output_index,
                           "item": function_item(meta, n, call, true)}),
                );
            }
            let done = response(reply, meta, json!(output(meta, text, calls)), true);
            let name = if reply.at_output_limit {
                "response.incomplete"
            } else {
                "response.completed"
            };
            events.push(name, json!({"response": done}));
        }
        Body::MidStream { text, end } => {
            if !text.is_empty() {
                text_deltas(&mut events, reply, meta, text);
            }
            match end {
                MidStreamEnd::ErrorChunk(message) => {
                    events.push("error", error_event(message));
                    // Then the response, failed: OpenAI ends a failed stream with both.
                    let mut failed = response(reply, meta, json!([]), false);
                    failed["status"] = json!("failed");
                    failed["error"] = json!({"code": "server_error", "message": message});
                    events.push("response.failed", json!({"response": failed}));
                }
                MidStreamEnd::Abort => events.steps.push(Step::Abort),
            }
        }
        Body::Hang => events.steps.push(Step::Hang),
        Body::HttpError { .. } | Body::Reset => {}
    }
    events.steps
}

/// The JSON of a non-streamed reply.
pub(crate) fn completion(reply: &Reply, meta: &Meta<'_>) -> Value {
    let (text, calls): (&str, &[ScriptedToolCall]) = match &reply.body {
        Body::Answer { text, calls } => (text, calls),
        Body::MidStream { text, .. } => (text, &[]),
        _ => ("", &[]),
    };
    response(reply, meta, json!(output(meta, text, calls)), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::frames::tests::rendered;

    const META: Meta<'static> = Meta {
        seq: 1,
        model: "m",
        created: 0,
    };

    #[test]
    fn a_text_reply_streams_a_message_item_and_completes_with_usage() {
        let reply = Reply::text("Hello there")
            .in_deltas(2)
            .with_cached_tokens(4);
        let frames = rendered(&stream_steps(&reply, &META));
        let names: Vec<&str> = frames.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.output_item.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_item.done",
                "response.completed"
            ]
        );
        let numbers: Vec<u64> = frames
            .iter()
            .map(|(_, d)| d["sequence_number"].as_u64().unwrap())
            .collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5]);
        assert_eq!(frames[2].1["delta"], "Hello ");
        assert_eq!(
            frames[5].1["response"]["usage"],
            json!({"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4},
                   "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                   "total_tokens": 15})
        );
    }

    #[test]
    fn a_tool_call_streams_a_function_call_item_with_argument_deltas() {
        let reply = Reply::tool_call("bash", json!({"command": "ls -la"}));
        let frames = rendered(&stream_steps(&reply, &META));
        assert_eq!(frames[1].1["item"]["type"], "function_call");
        assert_eq!(frames[1].1["item"]["name"], "bash");
        let arguments: String = frames
            .iter()
            .filter(|(n, _)| n == "response.function_call_arguments.delta")
            .map(|(_, d)| d["delta"].as_str().unwrap())
            .collect();
        assert_eq!(arguments, r#"{"command":"ls -la"}"#);
        let done = frames
            .iter()
            .find(|(n, _)| n == "response.output_item.done")
            .unwrap();
        assert_eq!(done.1["item"]["arguments"], arguments);
        assert_eq!(done.1["item"]["status"], "completed");
        assert_eq!(frames.last().unwrap().0, "response.completed");
    }

    #[test]
    fn failures_and_the_output_limit_end_as_openai_does() {
        let frames = rendered(&stream_steps(&Reply::error_mid_stream("p", "boom"), &META));
        let [.., error, failed] = frames.as_slice() else {
            panic!("{frames:?}");
        };
        assert_eq!(
            (error.0.as_str(), &error.1["error"]["message"]),
            ("error", &json!("boom"))
        );
        assert_eq!(failed.0, "response.failed");
        assert_eq!(failed.1["response"]["status"], "failed");
        assert_eq!(failed.1["response"]["error"]["message"], "boom");
        let cut = rendered(&stream_steps(&Reply::text("x").at_output_limit(), &META));
        let last = cut.last().unwrap();
        assert_eq!(last.0, "response.incomplete");
        assert_eq!(
            last.1["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );
        let whole = completion(&Reply::tool_call("bash", json!({})).with_text("t"), &META);
        assert_eq!(whole["output"][0]["type"], "message");
        assert_eq!(whole["output"][1]["type"], "function_call");
        assert_eq!(whole["status"], "completed");
    }
}
