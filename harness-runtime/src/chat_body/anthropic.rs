//! Anthropic's Messages API (`POST /v1/messages`, `@ai-sdk/anthropic`): the system prompt at the
//! top level, tool results as `tool_result` blocks of a user message.

use serde_json::Value;

use super::{Read, Turn, array, joined_text, present};

pub(crate) fn read(raw: &Value) -> Read {
    let mut turns = Vec::new();
    match raw.get("system") {
        Some(Value::String(text)) => turns.push(Turn::new("system", text.clone())),
        Some(Value::Array(blocks)) => turns.push(Turn::new("system", joined_text(blocks))),
        _ => {}
    }
    for message in array(raw, "messages") {
        turns.extend(message_turns(message));
    }
    Read {
        model: super::model(raw).to_owned(),
        stream: raw.get("stream").and_then(Value::as_bool).unwrap_or(false),
        tools: array(raw, "tools")
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .map(str::to_owned)
            .collect(),
        tool_choice: present(raw, "tool_choice").cloned(),
        turns,
        // Structured outputs' `output_format` (OpenCode itself asks for a tool call instead).
        response_format: present(raw, "output_format").cloned(),
    }
}

/// A message's turns: a user message's `tool_result` blocks are a tool result (`@ai-sdk/anthropic`
/// puts them first), its other blocks the user's.
fn message_turns(message: &Value) -> Vec<Turn> {
    let role = super::role(message);
    let blocks = match message.get("content") {
        Some(Value::String(text)) => return vec![Turn::new(&role, text.clone())],
        Some(Value::Array(blocks)) => blocks.as_slice(),
        _ => return vec![Turn::new(&role, String::new())],
    };
    let is_result = |b: &&Value| b.get("type").and_then(Value::as_str) == Some("tool_result");
    let (results, rest): (Vec<&Value>, Vec<&Value>) = blocks.iter().partition(is_result);
    let mut turns = Vec::new();
    if !results.is_empty() {
        let text = results
            .iter()
            .map(|r| match r.get("content") {
                Some(Value::String(text)) => text.clone(),
                Some(Value::Array(parts)) => joined_text(parts),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n");
        turns.push(Turn::new("tool", text));
    }
    if !rest.is_empty() || results.is_empty() {
        let rest: Vec<Value> = rest.into_iter().cloned().collect();
        turns.push(Turn::new(&role, joined_text(&rest)));
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_system_messages_and_tool_results() {
        let read = read(&json!({
            "model": "m", "stream": true,
            "system": [{"type": "text", "text": "sys"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "bash", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]},
            ],
            "tools": [{"name": "bash", "input_schema": {}}],
            "tool_choice": {"type": "auto"},
        }));
        let roles: Vec<&str> = read.turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool"]);
        assert_eq!(
            (read.turns[0].text.as_str(), read.turns[1].text.as_str()),
            ("sys", "hi")
        );
        assert_eq!(read.tools, ["bash"]);
        assert!(read.stream);
    }
}
