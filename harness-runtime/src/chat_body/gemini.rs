//! Google Gemini (`POST /v1beta/models/<model>:streamGenerateContent?alt=sse` or
//! `:generateContent`, `@ai-sdk/google`): the model and the streaming mode are in the path;
//! `contents` with `parts`, the model's role is `model`, a tool result a `functionResponse` part.

use serde_json::Value;

use super::{Read, Turn, array, joined_text};

pub(crate) fn read(path: &str, raw: &Value) -> Read {
    let (model, action) = model_and_action(path);
    let mut turns = Vec::new();
    if let Some(system) = raw.get("systemInstruction") {
        turns.push(Turn::new("system", joined_text(array(system, "parts"))));
    }
    for content in array(raw, "contents") {
        turns.extend(content_turns(content));
    }
    let generation = raw.get("generationConfig");
    let response_format = generation.and_then(|g| {
        g.get("responseSchema")
            .filter(|s| !s.is_null())
            .or_else(|| {
                g.get("responseMimeType")
                    .filter(|m| m.as_str() == Some("application/json"))
            })
            .cloned()
    });
    Read {
        model: model.to_owned(),
        stream: action == "streamGenerateContent",
        tools: tool_names(raw),
        tool_choice: raw
            .pointer("/toolConfig/functionCallingConfig")
            .filter(|v| !v.is_null())
            .cloned(),
        turns,
        response_format,
    }
}

/// `<model>` and `<action>` of `…/models/<model>:<action>[?query]`; empty when absent.
pub(crate) fn model_and_action(path: &str) -> (&str, &str) {
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let last = path.rsplit('/').next().unwrap_or_default();
    last.rsplit_once(':').unwrap_or((last, ""))
}

/// The declared functions' names, from `tools` as a list of tool objects or one object.
fn tool_names(raw: &Value) -> Vec<String> {
    let tools = match raw.get("tools") {
        Some(Value::Array(tools)) => tools.iter().collect(),
        Some(tool @ Value::Object(_)) => vec![tool],
        _ => Vec::new(),
    };
    tools
        .into_iter()
        .flat_map(|tool| array(tool, "functionDeclarations"))
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// A content's turns: `functionResponse` parts are a tool result, other parts their role's
/// (`model` is the assistant).
fn content_turns(content: &Value) -> Vec<Turn> {
    let role = match content.get("role").and_then(Value::as_str) {
        Some("model") => "assistant",
        Some(role) => role,
        None => "?",
    };
    let parts = array(content, "parts");
    let (results, rest): (Vec<&Value>, Vec<&Value>) = parts
        .iter()
        .partition(|p| p.get("functionResponse").is_some());
    let mut turns = Vec::new();
    if !results.is_empty() {
        let text = results
            .iter()
            .map(|r| r["functionResponse"]["response"].to_string())
            .collect::<Vec<_>>()
            .join("\n");
        turns.push(Turn::new("tool", text));
    }
    if !rest.is_empty() || results.is_empty() {
        let rest: Vec<Value> = rest.into_iter().cloned().collect();
        turns.push(Turn::new(role, joined_text(&rest)));
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_path_names_the_model_and_the_streaming_mode() {
        let body = json!({
            "systemInstruction": {"parts": [{"text": "sys"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "hi"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": {"ok": 1}}}]},
            ],
            "tools": [{"functionDeclarations": [{"name": "bash"}, {"name": "read"}]}],
            "generationConfig": {"responseMimeType": "application/json"},
        });
        let read = read("/v1beta/models/m-1:streamGenerateContent?alt=sse", &body);
        assert_eq!((read.model.as_str(), read.stream), ("m-1", true));
        let roles: Vec<&str> = read.turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "tool"]);
        assert_eq!(read.tools, ["bash", "read"]);
        assert_eq!(read.response_format, Some(json!("application/json")));
        assert!(!super::read("/v1beta/models/m-1:generateContent", &body).stream);
    }
}
