//! Which chunk of a chat stream carries the model's output (text, reasoning or a tool call), so
//! a stream's time to its first token can be read from it: the scripted model's as it streams,
//! a recorded one's from its chunks.

use serde_json::{Value, json};

/// Whether a chunk's payload carries model output: OpenAI's `choices[].delta` with content,
/// reasoning or tool calls, Ollama's `message` with content, thinking or tool calls, a
/// Responses output delta or function call item, an Anthropic content delta or `tool_use`
/// block, or Gemini parts with text or a function call. A role-only first chunk, a
/// `message_start`/`response.created`, a finish or a usage chunk does not.
pub(crate) fn carries_output(data: &Value) -> bool {
    if let Some(kind) = data.get("type").and_then(Value::as_str) {
        return typed_event_output(kind, data);
    }
    let gemini = data
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array)
        .is_some_and(|parts| {
            parts.iter().any(|part| {
                part.get("functionCall").is_some()
                    || part
                        .get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| !t.is_empty())
            })
        });
    let openai = gemini
        || data
            .get("choices")
            .and_then(Value::as_array)
            .is_some_and(|choices| {
                choices
                    .iter()
                    .filter_map(|c| c.get("delta"))
                    .any(has_output)
            });
    openai || data.get("message").is_some_and(has_output)
}

/// Whether a streamed frame (an SSE event's `data:` lines, or an NDJSON line) carries model
/// output.
pub(crate) fn frame_carries_output(frame: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(frame) else {
        return false;
    };
    text.lines()
        .map(|line| line.strip_prefix("data:").map_or(line, str::trim_start))
        .filter_map(|payload| serde_json::from_str::<Value>(payload).ok())
        .any(|data| carries_output(&data))
}

/// Whether a typed event (Responses' `response.*`, Anthropic's) carries output: a non-empty
/// delta, or the start of a function call or tool use.
fn typed_event_output(kind: &str, data: &Value) -> bool {
    let non_empty =
        |value: Option<&Value>| value.and_then(Value::as_str).is_some_and(|t| !t.is_empty());
    match kind {
        "response.output_text.delta"
        | "response.function_call_arguments.delta"
        | "response.reasoning_summary_text.delta"
        | "response.reasoning_text.delta" => non_empty(data.get("delta")),
        "response.output_item.added" => data.pointer("/item/type") == Some(&json!("function_call")),
        "content_block_start" => data.pointer("/content_block/type") == Some(&json!("tool_use")),
        "content_block_delta" => ["/delta/text", "/delta/partial_json", "/delta/thinking"]
            .iter()
            .any(|pointer| non_empty(data.pointer(pointer))),
        _ => false,
    }
}

/// Whether an OpenAI delta or an Ollama message has text, reasoning or tool calls.
fn has_output(delta: &Value) -> bool {
    [
        "content",
        "reasoning_content",
        "reasoning",
        "thinking",
        "tool_calls",
    ]
    .iter()
    .any(|field| match delta.get(field) {
        Some(Value::String(text)) => !text.is_empty(),
        Some(Value::Array(items)) => !items.is_empty(),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_with_output_are_told_from_role_finish_and_usage_frames() {
        let with = [
            &b"data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n"[..],
            b"{\"message\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"done\":false}\n",
            b"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n",
            b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n",
            b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"bash\",\"input\":{}}}\n\n",
            b"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hi\"}]}}]}\n\n",
        ];
        for frame in with {
            assert!(
                frame_carries_output(frame),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
        let without = [
            &b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"[..],
            b"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3}}\n\n",
            b"data: [DONE]\n\n",
            b"{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n",
            b"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{}}\n\n",
            b"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
            b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n",
            b"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[]},\"finishReason\":\"STOP\"}]}\n\n",
        ];
        for frame in without {
            assert!(
                !frame_carries_output(frame),
                "{}",
                String::from_utf8_lossy(frame)
            );
        }
    }
}
