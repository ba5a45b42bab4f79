//! OpenAI's Responses API (`POST /v1/responses`, `@ai-sdk/openai`): `input` items instead of
//! messages, tools named at the top level, the output format under `text.format`.

use serde_json::Value;

use super::{Read, Turn, array, joined_text, present};

pub(crate) fn read(raw: &Value) -> Read {
    let mut turns = Vec::new();
    if let Some(instructions) = raw.get("instructions").and_then(Value::as_str) {
        turns.push(Turn::new("system", instructions.to_owned()));
    }
    turns.extend(array(raw, "input").iter().map(turn));
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
        response_format: raw
            .pointer("/text/format")
            .filter(|v| !v.is_null())
            .cloned(),
    }
}

/// One input item: a message by its role (`developer` is the system's), a function call the
/// assistant's, its output a tool result; a reference to an earlier stored item is the
/// assistant's (only the model's own output is stored).
fn turn(item: &Value) -> Turn {
    if let Some(role) = item.get("role").and_then(Value::as_str) {
        let role = if role == "developer" { "system" } else { role };
        let text = match item.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => joined_text(parts),
            _ => String::new(),
        };
        return Turn::new(role, text);
    }
    match item.get("type").and_then(Value::as_str) {
        Some("function_call_output" | "custom_tool_call_output") => {
            let text = match item.get("output") {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Turn::new("tool", text)
        }
        Some(_) => Turn::new("assistant", String::new()),
        None => Turn::new("?", String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_input_items_as_turns() {
        let read = read(&json!({
            "model": "m", "stream": true,
            "input": [
                {"role": "developer", "content": "sys"},
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ],
            "tools": [{"type": "function", "name": "bash", "parameters": {}}],
            "tool_choice": "auto",
            "text": {"format": {"type": "json_schema", "name": "x", "schema": {}}},
        }));
        let roles: Vec<&str> = read.turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool"]);
        assert_eq!(read.turns[1].text, "hi");
        assert_eq!(read.tools, ["bash"]);
        assert!(read.stream && read.response_format.is_some());
        assert_eq!(read.tool_choice, Some(json!("auto")));
    }
}
