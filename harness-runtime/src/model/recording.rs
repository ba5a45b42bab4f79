//! Every request the scripted model received, as parsed facts plus the raw body.

use serde::Serialize;
use serde_json::Value;

use crate::chat_body;

/// The phrase OpenCode's title agent sends as a user message (`session/prompt.ts`).
const TITLE_PHRASE: &str = "Generate a title for this conversation";

/// Which API a request came in on: the wire API of one of OpenCode's provider packages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Api {
    /// OpenAI chat completions, `POST /v1/chat/completions` (`@ai-sdk/openai-compatible`,
    /// OpenRouter and most gateways).
    OpenAi,
    /// Ollama's native chat, `POST /api/chat`.
    Ollama,
    /// OpenAI's Responses API, `POST /v1/responses` (`@ai-sdk/openai`).
    Responses,
    /// Anthropic's Messages API, `POST /v1/messages` (`@ai-sdk/anthropic`).
    Anthropic,
    /// Google Gemini, `POST /v1beta/models/<model>:streamGenerateContent` or
    /// `:generateContent` (`@ai-sdk/google`).
    Gemini,
}

/// How a request was answered: by the script, a cassette, or the real model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Answer {
    /// The next queued reply (`live.model().reply(..)`).
    Queue {
        /// What the reply was.
        reply: String,
    },
    /// A rule, by its position among the rules.
    Rule {
        /// 0-based position of the rule.
        index: usize,
        /// What the reply was.
        reply: String,
    },
    /// The automatic answer to a title-generation request.
    Title,
    /// Nothing answered it (no scripted reply, or no recorded interaction of the cassette):
    /// HTTP 400, and the scenario fails at its end.
    Miss,
    /// The chosen reply calls a tool the request does not offer, a script mistake: HTTP 400,
    /// and the scenario fails at its end, as for a miss.
    UnofferedTool {
        /// What the reply was.
        reply: String,
        /// The first tool it calls that the request does not offer.
        tool: String,
    },
    /// A cassette's recorded response (replay).
    Cassette {
        /// 0-based position among the cassette's interactions.
        interaction: usize,
    },
    /// Forwarded to the real model, and recorded (record).
    Relayed,
}

/// One model request, parsed.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// 0-based arrival order.
    pub seq: usize,
    /// The API it came in on.
    pub api: Api,
    /// The `model` field.
    pub model: String,
    /// Whether the client asked for a stream (`stream: true`; Ollama streams unless `false`).
    pub stream: bool,
    /// The names of the offered tools, in the order sent.
    pub tools_offered: Vec<String>,
    /// `tool_choice` as sent (`"auto"`, `"required"`, an object), if any.
    pub tool_choice: Option<Value>,
    /// The role of every message, in order, alike on every API: `system`, `user`,
    /// `assistant`, and `tool` for a tool result (an Anthropic `tool_result` block, a Responses
    /// `function_call_output` item, a Gemini `functionResponse` part).
    pub message_roles: Vec<String>,
    /// The text of the last user message, if any.
    pub last_user_text: Option<String>,
    /// The requested output format, if any: `response_format` (OpenAI), `format` (Ollama),
    /// `text.format` (Responses), `output_format` (Anthropic), `generationConfig.responseSchema`
    /// or a JSON `responseMimeType` (Gemini).
    pub response_format: Option<Value>,
    /// Whether the client asked for usage (chat completions' `stream_options.include_usage`;
    /// always on the other APIs, which always report it).
    pub include_usage: bool,
    /// How the script answered it.
    pub answer: Answer,
    /// The body as received (`null` when it was not JSON).
    pub raw: Value,
    /// A user message asks for a title (see [`is_title_request`](Self::is_title_request)).
    #[serde(skip)]
    asks_title: bool,
}

/// A compact, structural summary of a request for evidence: no prompts, no raw body.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ModelRequestSummary {
    /// The API.
    pub api: Api,
    /// Streamed or not.
    pub stream: bool,
    /// Offered tool names.
    pub tools: Vec<String>,
    /// `tool_choice`, if any.
    pub tool_choice: Option<Value>,
    /// Message roles in order.
    pub roles: Vec<String>,
    /// The last user message's text.
    pub last_user_text: Option<String>,
    /// Whether a response format was requested.
    pub response_format: bool,
    /// How it was answered.
    pub answer: Answer,
}

impl ModelRequest {
    /// Parses a request body; `raw` is `Value::Null` for a body that is not JSON.
    #[cfg(test)]
    pub(crate) fn parse(seq: usize, api: Api, raw: Value) -> Self {
        Self::parse_at(seq, api, "", raw)
    }

    /// Parses a request body that came in at `path` (with its query): Gemini names the model
    /// and the streaming mode there.
    pub(crate) fn parse_at(seq: usize, api: Api, path: &str, raw: Value) -> Self {
        let read = match api {
            Api::OpenAi => chat_body::read_chat(&raw, false),
            Api::Ollama => chat_body::read_chat(&raw, true),
            Api::Responses => chat_body::read_responses(&raw),
            Api::Anthropic => chat_body::read_anthropic(&raw),
            Api::Gemini => chat_body::read_gemini(path, &raw),
        };
        let asks_title = read
            .turns
            .iter()
            .any(|t| t.role == "user" && t.text.contains(TITLE_PHRASE));
        Self {
            seq,
            api,
            model: read.model,
            stream: read.stream,
            tools_offered: read.tools,
            tool_choice: read.tool_choice,
            message_roles: read.turns.iter().map(|t| t.role.clone()).collect(),
            last_user_text: read
                .turns
                .iter()
                .rev()
                .find(|t| t.role == "user")
                .map(|t| t.text.clone()),
            response_format: read.response_format,
            // Only chat completions make usage optional; the other APIs always report it.
            include_usage: api != Api::OpenAi
                || raw
                    .pointer("/stream_options/include_usage")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            answer: Answer::Miss,
            asks_title,
            raw,
        }
    }

    /// Whether the request offers tool `name`.
    pub fn offers_tool(&self, name: &str) -> bool {
        self.tools_offered.iter().any(|t| t == name)
    }

    /// Whether the last message is a tool result (the turn continues after a tool ran).
    pub fn follows_tool_result(&self) -> bool {
        self.message_roles.last().map(String::as_str) == Some("tool")
    }

    /// Whether this is OpenCode's title generation: no tools, and a user message asking for a
    /// title (OpenCode sends it when a session is created without a title).
    pub fn is_title_request(&self) -> bool {
        self.tools_offered.is_empty() && self.asks_title
    }

    /// The offered tools for messages: `a, b`, or `none`.
    pub(crate) fn offered_list(&self) -> String {
        if self.tools_offered.is_empty() {
            "none".to_owned()
        } else {
            self.tools_offered.join(", ")
        }
    }

    /// The compact summary for evidence.
    pub fn summary(&self) -> ModelRequestSummary {
        ModelRequestSummary {
            api: self.api,
            stream: self.stream,
            tools: self.tools_offered.clone(),
            tool_choice: self.tool_choice.clone(),
            roles: self.message_roles.clone(),
            last_user_text: self.last_user_text.clone(),
            response_format: self.response_format.is_some(),
            answer: self.answer.clone(),
        }
    }

    /// One line for failure messages (the caller redacts it).
    pub(crate) fn one_line(&self) -> String {
        let path = match self.api {
            Api::OpenAi => "POST /v1/chat/completions",
            Api::Ollama => "POST /api/chat",
            Api::Responses => "POST /v1/responses",
            Api::Anthropic => "POST /v1/messages",
            Api::Gemini if self.stream => "POST /v1beta/models/…:streamGenerateContent",
            Api::Gemini => "POST /v1beta/models/…:generateContent",
        };
        let text = self
            .last_user_text
            .as_deref()
            .map(|t| {
                let short: String = t.chars().take(120).collect();
                if short.len() < t.len() {
                    format!("{short}…")
                } else {
                    short
                }
            })
            .unwrap_or_default();
        format!(
            "request #{} {path} model={:?} stream={} roles=[{}] tools=[{}] tool_choice={} last user text {:?}",
            self.seq,
            self.model,
            self.stream,
            self.message_roles.join(","),
            self.tools_offered.join(","),
            self.tool_choice
                .as_ref()
                .map(Value::to_string)
                .unwrap_or_else(|| "none".into()),
            text,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_an_opencode_request() {
        let raw = json!({
            "model": "m", "stream": true, "stream_options": {"include_usage": true},
            "tool_choice": "auto",
            "tools": [{"type": "function", "function": {"name": "bash"}}],
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "there"}]},
            ]
        });
        let r = ModelRequest::parse(3, Api::OpenAi, raw);
        assert_eq!(r.tools_offered, vec!["bash"]);
        assert_eq!(r.message_roles, vec!["system", "user"]);
        assert_eq!(r.last_user_text.as_deref(), Some("hi\nthere"));
        assert!(r.stream && r.include_usage && !r.is_title_request());
    }

    #[test]
    fn recognises_a_title_request_only_without_tools() {
        let title = json!({"model": "m", "messages": [
            {"role": "system", "content": "You are a title generator"},
            {"role": "user", "content": "Generate a title for this conversation:\n"},
            {"role": "user", "content": "Say hello"}]});
        assert!(ModelRequest::parse(0, Api::OpenAi, title.clone()).is_title_request());
        let mut with_tools = title;
        with_tools["tools"] = json!([{"type": "function", "function": {"name": "bash"}}]);
        assert!(!ModelRequest::parse(0, Api::OpenAi, with_tools).is_title_request());
    }
}
