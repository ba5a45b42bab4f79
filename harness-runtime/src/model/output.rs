//! Which chunk of a chat stream carries the model's output (text, reasoning or a tool call), so
//! a stream's time to its first token can be read from it: the scripted model's as it streams,
//! a recorded one's from its chunks.

use serde_json::Value;

/// Whether a chunk's payload carries model output: OpenAI's `choices[].delta` with content,
/// reasoning or tool calls, or Ollama's `message` with content, thinking or tool calls. A
/// role-only first chunk, a finish or a usage chunk does not.
pub(crate) fn carries_output(data: &Value) -> bool {
    let openai = data
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
