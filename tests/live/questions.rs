//! The `question` tool against real OpenCode: the model asks, the ask policy answers or rejects,
//! and the next model request shows what the model was told.

use harness_runtime::client::{AskOutcome, ToolCall, ToolStatus};
use harness_runtime::client::{Session, Turn};
use harness_runtime::model::ModelRequest;
use harness_runtime::prelude::*;
use serde_json::Value;

use crate::support::no_error;

/// The `question` tool's arguments as OpenCode 1.18.33 takes them (one list of questions, each
/// with a header and labelled options; as in `harness-runtime/tests/data/streams/r2-ev_q.sse`).
fn colour_question() -> Value {
    json!({"questions": [{
        "question": "Which colour?",
        "header": "Colour",
        "options": [
            {"label": "Red", "description": "warm"},
            {"label": "Blue", "description": "cool"}
        ]
    }]})
}

/// The content of the last `tool` message of a model request: the tool result the model saw.
fn tool_result(request: &ModelRequest) -> Option<String> {
    let message = request
        .raw
        .get("messages")?
        .as_array()?
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("tool"))?;
    match message.get("content")? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// The `question` tool's JSON schema as OpenCode offered it in `request`.
fn question_schema(request: &ModelRequest) -> anyhow::Result<Value> {
    request
        .raw
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|tools| {
            tools
                .iter()
                .find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some("question"))
        })
        .and_then(|t| t.pointer("/function/parameters"))
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the first model request offered no `question` tool"))
}

/// Names of the `required` properties at `pointer` of a JSON schema, sorted.
fn required(schema: &Value, pointer: &str) -> Vec<String> {
    let mut names: Vec<String> = schema
        .pointer(pointer)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The turn of `prompt` on a fresh agent and session, the questions the model asks answered by
/// `policy`.
async fn turn_answering_questions(
    live: &mut Live,
    prompt: &str,
    policy: QuestionPolicy,
) -> anyhow::Result<(Session, Turn)> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(Prompt::new(prompt).asks(AskPolicy::leave_pending().questions(policy)))
        .await?;
    Ok((session, turn))
}

/// The turn's `question` tool call, checked to have ended `status`.
fn question_call(turn: &Turn, status: ToolStatus) -> anyhow::Result<&ToolCall> {
    let call = turn
        .tool_call("question")
        .ok_or_else(|| anyhow::anyhow!("no question tool call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == status,
        "question call ended {:?}",
        call.status
    );
    Ok(call)
}

#[live_agent_test(timeout = "120s")]
async fn answered_with_label(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call("question", colour_question()));
    live.model().reply(Reply::text("You chose blue."));
    let (session, turn) = turn_answering_questions(
        live,
        "Ask me which colour I like",
        QuestionPolicy::Label("Blue".into()),
    )
    .await?;

    no_error(&turn)?;
    anyhow::ensure!(turn.text == "You chose blue.", "text was {:?}", turn.text);
    let call = question_call(&turn, ToolStatus::Completed)?;
    anyhow::ensure!(
        turn.interactions.len() == 1
            && turn.interactions[0].outcome
                == Some(AskOutcome::QuestionReplied(vec![vec!["Blue".into()]])),
        "interactions were {:?}",
        turn.interactions
    );
    // The answer reaches the model in the next request's tool result.
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    anyhow::ensure!(
        requests[1].follows_tool_result(),
        "second request roles {:?}",
        requests[1].message_roles
    );
    let result = tool_result(&requests[1])
        .ok_or_else(|| anyhow::anyhow!("the second model request carries no tool result"))?;
    anyhow::ensure!(
        result.contains("\"Which colour?\"=\"Blue\""),
        "tool result was {result:?}"
    );
    anyhow::ensure!(
        call.output.as_deref() == Some(result.as_str()),
        "tool output {:?} differs from what the model saw {result:?}",
        call.output
    );
    // Settled questions are no longer listed.
    let pending = session.client().questions().await?;
    anyhow::ensure!(pending.is_empty(), "questions still pending: {pending:?}");

    // The argument shape used above is the one OpenCode offers (the schema's required fields).
    let schema = question_schema(&requests[0])?;
    live.evidence().record(
        "question_tool_schema_required",
        json!({
            "arguments": required(&schema, "/required"),
            "question": required(&schema, "/properties/questions/items/required"),
            "option": required(
                &schema,
                "/properties/questions/items/properties/options/items/required"
            ),
        }),
    );
    live.evidence().record_turn(&turn);
    live.evidence().record("tool_result_seen_by_model", result);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn two_questions_first_option(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::tool_call(
        "question",
        json!({"questions": [
            {"question": "Which colour?", "header": "Colour", "options": [
                {"label": "Red", "description": "warm"},
                {"label": "Blue", "description": "cool"}]},
            {"question": "Which size?", "header": "Size", "options": [
                {"label": "Small", "description": "s"},
                {"label": "Large", "description": "l"}]}
        ]}),
    ));
    live.model().reply(Reply::text("Red and small."));
    let (_session, turn) =
        turn_answering_questions(live, "Ask me two things", QuestionPolicy::FirstOption).await?;

    no_error(&turn)?;
    anyhow::ensure!(turn.text == "Red and small.", "text was {:?}", turn.text);
    // One ask carrying both questions, answered per question with its first option.
    let expected = vec![vec!["Red".to_string()], vec!["Small".to_string()]];
    anyhow::ensure!(
        turn.interactions.len() == 1
            && turn.interactions[0].outcome == Some(AskOutcome::QuestionReplied(expected.clone())),
        "interactions were {:?}",
        turn.interactions
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    let result = tool_result(&requests[1])
        .ok_or_else(|| anyhow::anyhow!("the second model request carries no tool result"))?;
    anyhow::ensure!(
        result.contains("\"Which colour?\"=\"Red\"")
            && result.contains("\"Which size?\"=\"Small\""),
        "tool result was {result:?}"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record("tool_result_seen_by_model", result);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn rejected(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call("question", colour_question()));
    let (session, turn) =
        turn_answering_questions(live, "Ask me which colour I like", QuestionPolicy::Reject)
            .await?;

    anyhow::ensure!(
        turn.interactions.len() == 1
            && turn.interactions[0].outcome == Some(AskOutcome::QuestionRejected),
        "interactions were {:?}",
        turn.interactions
    );
    let call = question_call(&turn, ToolStatus::Error)?;
    let pending = session.client().questions().await?;
    anyhow::ensure!(pending.is_empty(), "questions still pending: {pending:?}");
    // A rejected question stops the loop (like a rejected permission): the model is not asked
    // again, and the turn ends without a message error; the tool call carries the rejection.
    anyhow::ensure!(
        call.error.as_deref() == Some("The user dismissed this question"),
        "question call error was {:?}",
        call.error
    );
    no_error(&turn)?;
    let requests = live.model().requests();
    anyhow::ensure!(
        requests.len() == 1,
        "the model was asked again after the rejection: {} requests",
        requests.len()
    );
    anyhow::ensure!(
        turn.messages.len() == 1
            && turn.messages[0].info.finish.as_deref() == Some("tool-calls")
            && turn.messages[0].info.time.completed.is_some(),
        "assistant messages were {:?}",
        turn.messages.iter().map(|m| &m.info).collect::<Vec<_>>()
    );

    live.evidence().record_turn(&turn);
    live.evidence().record("question_tool_error", &call.error);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
