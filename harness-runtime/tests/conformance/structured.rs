//! Structured output: a prompt with a `json_schema` format, and what the message carries.

use harness_runtime::model::Reply;
use serde_json::{Value, json};

use crate::differences::Deliberate;
use crate::prompts::titled_session;
use crate::talk::{NextTurn, Talk};

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// The prompt's format: an object with two required properties.
fn format() -> Value {
    json!({"type": "json_schema", "schema": {
        "type": "object",
        "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["answer", "count"],
    }})
}

/// What the fixture's turn answers to [`format`] (the schema's minimal instance); real
/// OpenCode's model is scripted to call `StructuredOutput` with the same.
fn script_structured_turn(talk: &Talk) {
    talk.model()
        .reply(Reply::structured(json!({"answer": "fixture", "count": 0})));
}

fn prompt() -> Value {
    json!({"format": format(), "parts": [{"type": "text", "text": "answer in the format"}]})
}

interaction!(
    /// A blocking prompt with a `json_schema` format: the assistant message carries the value
    /// in `info.structured`, the `StructuredOutput` call among its parts.
    blocking(talk) {
        let id = titled_session(talk).await?;
        script_structured_turn(talk);
        let answer = talk.post(&format!("/session/{id}/message"), prompt()).await?;
        let message = answer.str("/info/id")?;
        let user = answer.str("/info/parentID")?;
        talk.get(&format!("/session/{id}/message/{message}")).await?;
        talk.get(&format!("/session/{id}/message/{user}")).await?;
    }
);

interaction!(
    /// The same prompt through `prompt_async`: its events until idle, then the session's
    /// messages (the user message keeps the format).
    async_until_idle(talk) {
        let id = titled_session(talk).await?;
        script_structured_turn(talk);
        talk.post(&format!("/session/{id}/prompt_async"), prompt()).await?;
        talk.events_until("session.idle").await?;
        talk.get(&format!("/session/{id}/message")).await?;
        talk.get(&format!("/session/{id}/message?limit=1")).await?;
    }
);

interaction!(
    /// The model's structured output does not match the schema: real OpenCode does not check
    /// it, the message carries it in `info.structured` and its tool call says `valid: true`.
    invalid_output(talk) {
        let id = titled_session(talk).await?;
        talk.next_turn(NextTurn::InvalidStructuredOutput)?;
        let answer = talk.post(&format!("/session/{id}/message"), prompt()).await?;
        let message = answer.str("/info/id")?;
        talk.get(&format!("/session/{id}/message/{message}")).await?;
    }
);

interaction!(
    /// The model answers text instead of calling `StructuredOutput`: the message completes
    /// with the text and a `StructuredOutputError`, and no `session.error` is sent.
    no_structured_output(talk) {
        let id = titled_session(talk).await?;
        talk.next_turn(NextTurn::NoStructuredOutput)?;
        talk.post(&format!("/session/{id}/message"), prompt()).await?;
        talk.events_until("session.idle").await?;
    }
);
