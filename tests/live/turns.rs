//! Turns against real OpenCode and the scripted model: text, streaming, several turns, model
//! failures surfaced as typed errors.

use harness_runtime::client::MessageError;
use harness_runtime::client::Turn;
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::prelude::*;

/// The tools OpenCode 1.18.33 offers the build agent, in the order it sends them.
const BUILD_TOOLS: [&str; 11] = [
    "bash",
    "edit",
    "glob",
    "grep",
    "question",
    "read",
    "skill",
    "task",
    "todowrite",
    "webfetch",
    "write",
];

#[live_agent_test(timeout = "120s")]
async fn plain_text_reply(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::text("Hello from the scripted model."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Say hello").await?;
    anyhow::ensure!(
        turn.text == "Hello from the scripted model.",
        "text was {:?}",
        turn.text
    );
    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    let request = &requests[0];
    anyhow::ensure!(request.stream, "OpenCode streams its model calls");
    anyhow::ensure!(
        request.tools_offered == BUILD_TOOLS,
        "tools offered: {:?}",
        request.tools_offered
    );
    anyhow::ensure!(
        request.tool_choice == Some(json!("auto")),
        "tool_choice {:?}",
        request.tool_choice
    );
    anyhow::ensure!(
        request.message_roles == ["system", "user"],
        "roles {:?}",
        request.message_roles
    );
    anyhow::ensure!(request.last_user_text.as_deref() == Some("Say hello"));
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// A reply streamed as 6 content chunks reaches the client as 6 `message.part.delta` events:
/// OpenCode 1.18.33 forwards every provider delta, it does not coalesce them.
#[live_agent_test(timeout = "120s")]
async fn streamed_text_arrives_in_deltas(live: &mut Live) -> anyhow::Result<()> {
    let text = "one two three four five six seven eight nine ten eleven twelve";
    live.model().reply(Reply::text(text).in_deltas(6));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Count to twelve").await?;
    anyhow::ensure!(turn.text == text, "text was {:?}", turn.text);
    anyhow::ensure!(turn.error().is_none(), "error {:?}", turn.error());
    anyhow::ensure!(
        turn.text_delta_count == 6,
        "{} text deltas for 6 streamed chunks",
        turn.text_delta_count
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("text_delta_count", turn.text_delta_count);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// The second prompt of a session sends the first exchange back to the model.
#[live_agent_test(timeout = "120s")]
async fn two_turns_in_one_session(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::text("The first answer."))
        .reply(Reply::text("The second answer."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let first = session.prompt("First question").await?;
    let second = session.prompt("Second question").await?;
    anyhow::ensure!(first.text == "The first answer.", "first {:?}", first.text);
    anyhow::ensure!(
        second.text == "The second answer.",
        "second {:?}",
        second.text
    );
    anyhow::ensure!(first.error().is_none() && second.error().is_none());
    anyhow::ensure!(
        second.messages.len() == 1,
        "the second turn holds only its own assistant message, not the first one's: {}",
        second.messages.len()
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    anyhow::ensure!(requests[0].message_roles == ["system", "user"]);
    anyhow::ensure!(
        requests[1].message_roles == ["system", "user", "assistant", "user"],
        "second request roles {:?}",
        requests[1].message_roles
    );
    anyhow::ensure!(requests[1].last_user_text.as_deref() == Some("Second question"));
    let history = requests[1].raw["messages"].to_string();
    anyhow::ensure!(
        history.contains("First question") && history.contains("The first answer."),
        "the second request must carry the first exchange"
    );
    let messages = session.messages().await?;
    let roles: Vec<&str> = messages.iter().map(|m| m.info.role.as_str()).collect();
    anyhow::ensure!(
        roles == ["user", "assistant", "user", "assistant"],
        "stored roles {roles:?}"
    );
    live.evidence().record_turn(&first);
    live.evidence().record_turn(&second);
    live.evidence().record("stored_roles", roles);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// The status code of the turn's `APIError`, from the message and from `session.error`.
fn api_error_status(turn: &Turn) -> anyhow::Result<(Option<u64>, bool)> {
    let message = turn
        .errors
        .first()
        .ok_or_else(|| anyhow::anyhow!("no assistant message error; trace {:?}", turn.trace))?;
    let MessageError::ApiError {
        status_code,
        is_retryable,
        ..
    } = message
    else {
        anyhow::bail!("expected APIError, got {message:?}");
    };
    anyhow::ensure!(
        turn.session_errors.iter().any(|e| e == message),
        "session.error must carry the same APIError: {:?}",
        turn.session_errors
    );
    Ok((*status_code, *is_retryable))
}

/// HTTP 500 and 502 from the model end the turn with `APIError{statusCode}` in the message and
/// in `session.error`, after OpenCode's 5 retries (6 requests). The answers carry
/// `retry-after-ms: 1`, which OpenCode honours instead of its 2-30 s backoff, so the retries
/// take milliseconds. A 400 is not retried: one request, `APIError{statusCode: 400}`.
#[live_agent_test(timeout = "180s")]
async fn model_http_errors_surface_as_api_error(live: &mut Live) -> anyhow::Result<()> {
    let model = live.model();
    model.rule(
        Rule::when(Matcher::last_user_text_contains("internal")).reply(
            Reply::http_error(
                500,
                json!({"error": {"message": "scripted internal error", "type": "server_error"}}),
            )
            .with_retry_after_ms(1),
        ),
    );
    model.rule(
        Rule::when(Matcher::last_user_text_contains("gateway")).reply(
            Reply::http_error(
                502,
                json!({"error": {"message": "scripted bad gateway", "type": "bad_gateway"}}),
            )
            .with_retry_after_ms(1),
        ),
    );
    model.rule(
        Rule::when(Matcher::last_user_text_contains("invalid"))
            .reply(Reply::http_error(400, json!({"error": {"message": "scripted invalid request", "type": "invalid_request_error"}}))),
    );
    let agent = live.opencode().await?;
    let mut statuses = Vec::new();
    for (prompt, expected_status, expected_requests) in [
        ("Trigger an internal error", 500, 6),
        ("Trigger a bad gateway", 502, 6),
        ("Trigger an invalid request", 400, 1),
    ] {
        let before = live.model().requests().len();
        let session = agent.create_session().await?;
        let turn = session.prompt(prompt).await?;
        let (status, retryable) = api_error_status(&turn)?;
        anyhow::ensure!(
            status == Some(expected_status),
            "{prompt}: statusCode {status:?}"
        );
        anyhow::ensure!(
            retryable == (expected_status >= 500),
            "{prompt}: isRetryable {retryable}"
        );
        anyhow::ensure!(turn.text.is_empty(), "{prompt}: text {:?}", turn.text);
        let sent = live.model().requests().len() - before;
        anyhow::ensure!(
            sent == expected_requests,
            "{prompt}: {sent} model requests, expected {expected_requests}"
        );
        live.evidence().record_turn(&turn);
        statuses.push(json!({"status": status, "retryable": retryable, "model_requests": sent}));
    }
    live.evidence().record("api_errors", statuses);
    live.assert_evidence();
    Ok(())
}

/// A connection reset before any response is retried by OpenCode (after its first backoff of
/// about 2 s): the second request gets the answer and the turn ends without an error.
#[live_agent_test(timeout = "120s")]
async fn connection_reset_is_retried(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::reset())
        .reply(Reply::text("Answer after the reset."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Survive a reset").await?;
    anyhow::ensure!(
        turn.text == "Answer after the reset.",
        "text {:?}",
        turn.text
    );
    anyhow::ensure!(turn.error().is_none(), "error {:?}", turn.error());
    anyhow::ensure!(
        turn.messages.len() == 1,
        "the retry stays in the same assistant message: {} messages",
        turn.messages.len()
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    anyhow::ensure!(
        requests[1].message_roles == requests[0].message_roles
            && requests[1].last_user_text == requests[0].last_user_text,
        "the retry resends the same conversation"
    );
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// A stream that breaks after some text deltas (paced 300 ms apart) is retried by OpenCode
/// 1.18.33 like a reset, and the retried answer completes the turn without an error. What
/// happens to the partial text depends on timing, so this scenario asserts both outcomes:
/// - OpenCode read the deltas before the break (idle machine): the partial text stays as its
///   own text part, ahead of the retried answer in the same message (`turn.text` holds both);
/// - it did not (loaded machine): its log says `Cannot connect to API: The socket connection
///   was closed unexpectedly` and the partial text never becomes a part.
///
/// The evidence holds only what both outcomes share.
#[live_agent_test(timeout = "120s")]
async fn stream_aborted_mid_answer(live: &mut Live) -> anyhow::Result<()> {
    const PARTIAL: &str = "Partial answer that breaks";
    const COMPLETE: &str = "Complete answer after the break.";
    live.model()
        .reply(
            Reply::abort_mid_stream(PARTIAL)
                .in_deltas(3)
                .slow(std::time::Duration::from_millis(300)),
        )
        .reply(Reply::text(COMPLETE));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Survive a broken stream").await?;
    anyhow::ensure!(turn.error().is_none(), "error {:?}", turn.error());
    anyhow::ensure!(
        turn.messages.len() == 1,
        "the retry stays in the same assistant message: {} messages",
        turn.messages.len()
    );
    let texts: Vec<&str> = turn
        .parts_of("text")
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect();
    let partial_kept = match texts.as_slice() {
        [complete] => {
            anyhow::ensure!(*complete == COMPLETE, "text parts {texts:?}");
            false
        }
        [partial, complete] => {
            anyhow::ensure!(
                *complete == COMPLETE && !partial.is_empty() && PARTIAL.starts_with(partial),
                "text parts {texts:?}: a prefix of the partial text, then the retried answer"
            );
            true
        }
        _ => anyhow::bail!("text parts {texts:?}"),
    };
    live.progress(format!("partial text kept as a part: {partial_kept}"));
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    anyhow::ensure!(
        requests[1].message_roles == ["system", "user"]
            && requests[1].last_user_text == requests[0].last_user_text,
        "the retry resends the conversation without the partial answer: {:?}",
        requests[1].message_roles
    );
    live.evidence().record(
        "turn",
        json!({
            "errors": turn.errors.len() + turn.session_errors.len(),
            "messages": turn.messages.len(),
            "last_text_part_is_the_retried_answer": texts.last() == Some(&COMPLETE),
        }),
    );
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
