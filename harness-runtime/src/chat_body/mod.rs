//! What a chat request's body says, read alike on every API the scripted model speaks:
//! OpenAI chat completions and Ollama here, the Responses API, Anthropic Messages and Gemini in
//! their own files ([`read`] gives the same facts for all).
//!
//! A base module: the scripted model's request log (`model`) and a cassette's matching key
//! (`cassette`) read a request the same way, here.

mod anthropic;
mod gemini;
mod responses;

pub(crate) use anthropic::read as read_anthropic;
pub(crate) use gemini::model_and_action as gemini_model_and_action;
pub(crate) use gemini::read as read_gemini;
pub(crate) use responses::read as read_responses;

use serde_json::Value;

/// The body's `messages`, empty when missing.
pub(crate) fn messages(raw: &Value) -> &[Value] {
    raw.get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A message's `role`, `?` when missing.
pub(crate) fn role(message: &Value) -> String {
    message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// Whether `message` has the role `role`.
pub(crate) fn has_role(message: &Value, role: &str) -> bool {
    message.get("role").and_then(Value::as_str) == Some(role)
}

/// The text of a message: its `content` string, or the `text` of its parts joined by newlines.
pub(crate) fn text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The last message with the role `user`.
pub(crate) fn last_user(raw: &Value) -> Option<&Value> {
    messages(raw).iter().rev().find(|m| has_role(m, "user"))
}

/// The names of the offered tools, in the order sent (OpenAI's `function.name`, or `name`).
pub(crate) fn tool_names(raw: &Value) -> Vec<&str> {
    raw.get("tools")
        .and_then(Value::as_array)
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| {
                    t.pointer("/function/name")
                        .or_else(|| t.get("name"))
                        .and_then(Value::as_str)
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the client asked for a stream: Ollama streams unless told not to, OpenAI only when
/// asked.
pub(crate) fn stream(raw: &Value, ollama: bool) -> bool {
    raw.get("stream").and_then(Value::as_bool).unwrap_or(ollama)
}

/// The requested output format: OpenAI's `response_format`, Ollama's `format`.
pub(crate) fn response_format(raw: &Value, ollama: bool) -> Option<&Value> {
    present(raw, if ollama { "format" } else { "response_format" })
}

/// The field `key`, unless missing or `null`.
pub(crate) fn present<'a>(raw: &'a Value, key: &str) -> Option<&'a Value> {
    raw.get(key).filter(|v| !v.is_null())
}

/// The `model` field, empty when missing.
pub(crate) fn model(raw: &Value) -> &str {
    raw.get("model").and_then(Value::as_str).unwrap_or_default()
}

/// One message of a conversation, read alike on every API: its role (`system`, `user`,
/// `assistant`, or `tool` for a tool result, whatever the API calls it) and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) role: String,
    pub(crate) text: String,
}

impl Turn {
    pub(crate) fn new(role: &str, text: String) -> Self {
        Self {
            role: role.to_owned(),
            text,
        }
    }
}

/// What a chat request on `api` at `path` (with its query) asks, read from its body.
pub(crate) struct Read {
    pub(crate) model: String,
    pub(crate) stream: bool,
    pub(crate) tools: Vec<String>,
    pub(crate) tool_choice: Option<Value>,
    pub(crate) turns: Vec<Turn>,
    pub(crate) response_format: Option<Value>,
}

/// Reads a chat-completions request (`ollama`: Ollama's `/api/chat`, which streams unless told
/// not to and names its schema `format`). The other APIs' readers: [`read_responses`],
/// [`read_anthropic`], [`read_gemini`] (which API a request is on is the model's to say).
pub(crate) fn read_chat(raw: &Value, ollama: bool) -> Read {
    Read {
        model: model(raw).to_owned(),
        stream: stream(raw, ollama),
        tools: owned(tool_names(raw)),
        tool_choice: present(raw, "tool_choice").cloned(),
        turns: messages(raw)
            .iter()
            .map(|m| Turn {
                role: role(m),
                text: text(m),
            })
            .collect(),
        response_format: response_format(raw, ollama).cloned(),
    }
}

fn owned(names: Vec<&str>) -> Vec<String> {
    names.into_iter().map(str::to_owned).collect()
}

/// The `text` of every part in `parts` that has one, joined by newlines.
fn joined_text(parts: &[Value]) -> String {
    parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `raw[key]` as an array, empty when missing.
fn array<'a>(raw: &'a Value, key: &str) -> &'a [Value] {
    raw.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}
