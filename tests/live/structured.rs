//! Structured output: a `json_schema` prompt answered through OpenCode's `StructuredOutput`
//! tool, and the typed errors around it.

use harness_runtime::client::{ClientError, MessageError};
use harness_runtime::prelude::*;

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "count": {"type": "integer"}
        },
        "required": ["answer", "count"],
        "additionalProperties": false
    })
}

/// A `json_schema` prompt offers the build tools plus `StructuredOutput` with
/// `tool_choice: "required"`; the model's call becomes `turn.structured` in one request.
#[live_agent_test(timeout = "120s")]
async fn structured_output_is_returned(live: &mut Live) -> anyhow::Result<()> {
    let value = json!({"answer": "forty-two", "count": 42});
    live.model().reply(Reply::structured(value.clone()));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(Prompt::new("Answer in the schema").json_schema(schema()))
        .await?;
    anyhow::ensure!(
        turn.structured.as_ref() == Some(&value),
        "structured {:?}",
        turn.structured
    );
    let got = turn
        .structured_or_err()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(got == &value);
    anyhow::ensure!(turn.error().is_none(), "error {:?}", turn.error());
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    let request = &requests[0];
    anyhow::ensure!(
        request.tool_choice == Some(json!("required")),
        "tool_choice {:?}",
        request.tool_choice
    );
    anyhow::ensure!(
        request.tools_offered.len() == 12
            && request.offers_tool("StructuredOutput")
            && request.offers_tool("bash"),
        "the build tools plus StructuredOutput, got {:?}",
        request.tools_offered
    );
    let listed = session.messages().await;
    anyhow::ensure!(
        matches!(
            listed,
            Err(ClientError::MessagesUnavailableAfterStructuredPrompt { .. })
        ),
        "messages after a format prompt: {listed:?}"
    );
    live.evidence().record_turn(&turn);
    live.evidence().record(
        "messages_after_format_prompt",
        listed.err().map(|e| e.to_string()),
    );
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// OpenCode 1.18.33 does not validate the `StructuredOutput` call against the schema: a value
/// of the wrong shape (a number where the schema wants a string, a required field missing) is
/// captured as the turn's structured output, with no error and no retry.
#[live_agent_test(timeout = "120s")]
async fn schema_mismatch_is_not_validated(live: &mut Live) -> anyhow::Result<()> {
    let mismatch = json!({"answer": 7});
    live.model().reply(Reply::structured(mismatch.clone()));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(Prompt::new("Answer in the schema, badly").json_schema(schema()))
        .await?;
    anyhow::ensure!(
        turn.structured.as_ref() == Some(&mismatch),
        "structured {:?}",
        turn.structured
    );
    anyhow::ensure!(turn.error().is_none(), "error {:?}", turn.error());
    let requests = live.model().requests();
    anyhow::ensure!(
        requests.len() == 1,
        "{} model requests: a mismatch is not retried",
        requests.len()
    );
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// A model that answers a `json_schema` prompt with text instead of calling `StructuredOutput`
/// ends the turn with `StructuredOutputError` (OpenCode 1.18.33 reports `retries: 0`: it does
/// not ask again, and sends no `session.error`), typed by `structured_or_err()`. Listing the
/// session's messages afterwards gives the typed `MessagesUnavailableAfterStructuredPrompt`.
#[live_agent_test(timeout = "120s")]
async fn text_instead_of_structured_output_is_an_error(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::text("I would rather answer in prose."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(Prompt::new("Answer in the schema").json_schema(schema()))
        .await?;
    anyhow::ensure!(
        turn.structured.is_none(),
        "structured {:?}",
        turn.structured
    );
    anyhow::ensure!(
        matches!(
            turn.errors.as_slice(),
            [MessageError::StructuredOutputError { retries: 0, .. }]
        ),
        "errors {:?}",
        turn.errors
    );
    anyhow::ensure!(
        turn.session_errors.is_empty(),
        "OpenCode puts this error on the message only, no session.error: {:?}",
        turn.session_errors
    );
    let typed = turn.structured_or_err();
    anyhow::ensure!(
        matches!(typed, Err(ClientError::StructuredOutput { retries: 0, .. })),
        "structured_or_err {typed:?}"
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    anyhow::ensure!(requests[0].tool_choice == Some(json!("required")));
    let listed = session.messages().await;
    anyhow::ensure!(
        matches!(
            listed,
            Err(ClientError::MessagesUnavailableAfterStructuredPrompt { .. })
        ),
        "messages after a format prompt: {listed:?}"
    );
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("structured_or_err", typed.err().map(|e| e.to_string()));
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
