//! The cases of the cassette round trip, shared by both sides: what each
//! `round_trip::` scenario of `selftest-scenarios` asks, and how the scripted upstream of
//! `tests/runs/cassettes` answers it while the scenario is recorded. The upstream answers by the
//! last user text, so each prompt names its case.

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};
use serde_json::{Value, json};

/// Appended to every prompt of the scenarios when set: a changed prompt, which a replay misses.
pub const PROMPT_SUFFIX: &str = "SELFTEST_PROMPT_SUFFIX";
/// When set, the scenarios fail after their turn and evidence: a recording that must be written
/// as pending.
pub const FAIL_AFTER_TURN: &str = "SELFTEST_FAIL_AFTER_TURN";
/// The failure [`FAIL_AFTER_TURN`] makes.
pub const DELIBERATE_FAILURE: &str = "deliberate failure after the recorded turn";

/// A text answer streamed in several deltas.
pub const TEXT_IN_DELTAS: &str = "Round trip: answer in several pieces";
/// A bash tool call, then a text after the tool's result.
pub const TOOL_CALL: &str = "Round trip: run a tool";
/// A structured output (a `json_schema` prompt answered through `StructuredOutput`).
pub const STRUCTURED_OUTPUT: &str = "Round trip: answer in the schema";
/// A stream that sends some text, then an error chunk (retried after OpenCode's backoff), then
/// a text.
pub const ERROR_MID_STREAM: &str = "Round trip: fail in the middle of the answer";
/// An HTTP 500 (retried at once: `retry-after-ms: 1`), then a text.
pub const SERVER_ERROR: &str = "Round trip: survive a server error";
/// A connection reset before any response (retried after OpenCode's backoff), then a text.
pub const DROPPED_CONNECTION: &str = "Round trip: survive a dropped connection";
/// An HTTP 400, which OpenCode does not retry: the turn ends with an `APIError`.
pub const REFUSED_REQUEST: &str = "Round trip: send a request the model refuses";

/// What the bash tool prints.
pub const TOOL_OUTPUT: &str = "round-trip-tool-output";
/// The answer streamed in deltas.
pub const DELTAS_TEXT: &str = "This answer arrives in four separate pieces.";
/// The text after the tool's result.
pub const AFTER_TOOL_TEXT: &str = "The tool printed its words.";
/// The structured value.
pub fn structured_value() -> Value {
    json!({"answer": "forty-two", "count": 42})
}
/// The schema of [`STRUCTURED_OUTPUT`].
pub fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
        "required": ["answer", "count"],
        "additionalProperties": false
    })
}
/// The text before the error chunk.
pub const PARTIAL_TEXT: &str = "A partial answer that";
/// The error chunk's message (OpenCode retries it: the chunk says `server_error`).
pub const STREAM_ERROR: &str = "the scripted upstream refused to continue";
/// The answer after the retried error chunk.
pub const AFTER_ERROR_TEXT: &str = "Answered after the error in the stream.";
/// The answer after the retried 500.
pub const AFTER_500_TEXT: &str = "Answered after the server error.";
/// The answer after the retried reset.
pub const AFTER_RESET_TEXT: &str = "Answered after the dropped connection.";

/// What the changed upstream answers [`TOOL_CALL`] with instead of calling the tool.
pub const DECLINED_TOOL_TEXT: &str = "I would rather not run anything.";

/// Scripts `model` as the upstream of every case, changed: it answers [`TOOL_CALL`] in prose
/// instead of calling the tool (a model that drifted since the recording).
pub fn script_changed_upstream(model: &ScriptedModel) {
    model.rule(
        Rule::when(Matcher::last_user_text_contains(TOOL_CALL))
            .reply(Reply::text(DECLINED_TOOL_TEXT)),
    );
    script_upstream(model);
}

/// Scripts `model` as the upstream of every case: rules on the prompt, the failure of a case
/// once, then its answer (rules are tried in order).
pub fn script_upstream(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    model
        .rule(Rule::when(asks(TEXT_IN_DELTAS)).reply(Reply::text(DELTAS_TEXT).in_deltas(4)))
        .rule(
            Rule::when(asks(TOOL_CALL).and(Matcher::follows_tool_result()))
                .reply(Reply::text(AFTER_TOOL_TEXT)),
        )
        .rule(Rule::when(asks(TOOL_CALL)).reply(Reply::tool_call(
            "bash",
            json!({"command": format!("echo {TOOL_OUTPUT}"), "description": "Print words"}),
        )))
        .rule(
            Rule::when(asks(STRUCTURED_OUTPUT).and(Matcher::wants_structured_output()))
                .reply(Reply::structured(structured_value())),
        )
        .rule(
            Rule::when(asks(ERROR_MID_STREAM))
                .reply(Reply::error_mid_stream(PARTIAL_TEXT, STREAM_ERROR).in_deltas(2))
                .times(1),
        )
        .rule(Rule::when(asks(ERROR_MID_STREAM)).reply(Reply::text(AFTER_ERROR_TEXT)))
        .rule(
            Rule::when(asks(SERVER_ERROR))
                .reply(
                    Reply::http_error(
                        500,
                        json!({"error": {"message": "scripted internal error", "type": "server_error"}}),
                    )
                    .with_retry_after_ms(1),
                )
                .times(1),
        )
        .rule(Rule::when(asks(SERVER_ERROR)).reply(Reply::text(AFTER_500_TEXT)))
        .rule(
            Rule::when(asks(DROPPED_CONNECTION))
                .reply(Reply::reset())
                .times(1),
        )
        .rule(Rule::when(asks(DROPPED_CONNECTION)).reply(Reply::text(AFTER_RESET_TEXT)))
        .rule(Rule::when(asks(REFUSED_REQUEST)).reply(Reply::http_error(
            400,
            json!({"error": {"message": "scripted invalid request", "type": "invalid_request_error"}}),
        )));
}
