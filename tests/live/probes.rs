//! Real-model probes: the same OpenCode, configured by `OPENCODE_CONFIG_CONTENT` to reach the
//! model named by `TEST_OLLAMA_MODEL` (a real Ollama, or `scripts/local-model`).
//!
//! Each is a `cassette` scenario: on a fresh clone it replays `cassettes/probes__<fn>.json`, the
//! traffic of a real model recorded once (`LIVE_CASSETTE=record`), so the real model's
//! trajectory runs through real OpenCode with no model and no network; `LIVE_CASSETTE=live`
//! talks to the model instead.
//!
//! Verdicts are structural (a turn completed, a tool was called, an ask was answered), never the
//! model's wording. A capability the model did not exercise (it answered in prose instead of
//! calling the tool) is reported as skipped with that reason: never a false pass, never a false
//! fail. Evidence holds only structural facts, so the snapshots hold for any model.
//! Ceilings are "clearly stuck" bounds for a CPU-only model: a first turn takes about a minute.

use std::time::Duration;

use harness_runtime::client::Turn;
use harness_runtime::client::{ClientError, Event, MessageError};
use harness_runtime::prelude::*;

/// A probe's whole-turn ceiling (scaled by `LIVE_TIMEOUT_SCALE`).
const TURN: Duration = Duration::from_secs(480);

fn structural(turn: &Turn) -> serde_json::Value {
    json!({
        "completed": turn.messages.iter().any(|m| m.info.role == "assistant"),
        "error": turn.error().map(MessageError::name),
    })
}

#[live_agent_test(cassette, timeout = "600s")]
async fn basic_turn(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(
            Prompt::new("Reply with exactly the word PROBE-MARKER and nothing else.")
                .with_ceiling(TURN),
        )
        .await?;
    anyhow::ensure!(
        turn.error().is_none(),
        "the turn failed: {:?}",
        turn.error()
    );
    anyhow::ensure!(
        !turn.text.trim().is_empty(),
        "the model answered with no text"
    );
    // Whether a small model follows the instruction is its quality, not the harness's.
    live.progress(format!(
        "marker echoed: {}",
        turn.text.contains("PROBE-MARKER")
    ));
    live.evidence().record("basic_turn", structural(&turn));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(cassette, timeout = "600s")]
async fn streaming_turn(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(Prompt::new("Count from 1 to 20 in words, one per line.").with_ceiling(TURN))
        .await?;
    anyhow::ensure!(
        turn.error().is_none(),
        "the turn failed: {:?}",
        turn.error()
    );
    if turn.text_delta_count < 2 {
        return Err(live
            .skip(format!(
                "streaming not exercised: the reply arrived in {} text delta(s)",
                turn.text_delta_count
            ))
            .into());
    }
    live.evidence()
        .record("streamed", json!({"text_deltas_at_least_two": true}));
    live.evidence().record("turn", structural(&turn));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(cassette, timeout = "600s")]
async fn tool_call(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(
            Prompt::new(
                "Use the bash tool to run this exact command: echo PROBE-MARKER > probe.txt",
            )
            .with_ceiling(TURN),
        )
        .await?;
    let Some(call) = turn.tool_call("bash") else {
        return Err(live.skip("the model did not call the bash tool").into());
    };
    let written = std::fs::read_to_string(agent.workspace().join("probe.txt")).unwrap_or_default();
    if !written.contains("PROBE-MARKER") {
        return Err(live
            .skip("the model called bash, but not with the requested command")
            .into());
    }
    anyhow::ensure!(
        call.status.to_string() == "completed",
        "the bash call ended {}",
        call.status
    );
    live.evidence().record(
        "tool_call",
        json!({"tool": "bash", "status": call.status.to_string(), "effect_on_disk": true}),
    );
    live.assert_evidence();
    Ok(())
}

/// A bash ask answered by `policy`: the call must end `expected` (`completed` once approved,
/// `error` once rejected).
async fn permission_probe(
    live: &mut Live,
    policy: PermissionPolicy,
    reply: &str,
    expected: &str,
) -> anyhow::Result<()> {
    let agent = live
        .opencode_with(AgentOptions::default().permission(json!({"*": "allow", "bash": "ask"})))
        .await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(
            Prompt::new("Use the bash tool to run this exact command: echo PROBE-MARKER")
                .asks(AskPolicy::leave_pending().permissions(policy))
                .with_ceiling(TURN),
        )
        .await?;
    if turn.interactions.is_empty() {
        return Err(live
            .skip("the model did not call the bash tool, so nothing asked")
            .into());
    }
    let call = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("an ask without a bash call"))?;
    let status = call.status.to_string();
    anyhow::ensure!(status == expected, "a call answered {reply} ended {status}");
    live.evidence().record(
        "permission",
        json!({"asked": true, "reply": reply, "tool_status": status}),
    );
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(cassette, timeout = "600s")]
async fn permission_answered(live: &mut Live) -> anyhow::Result<()> {
    permission_probe(live, PermissionPolicy::Once, "once", "completed").await
}

#[live_agent_test(cassette, timeout = "600s")]
async fn permission_rejected(live: &mut Live) -> anyhow::Result<()> {
    permission_probe(live, PermissionPolicy::Reject, "reject", "error").await
}

#[live_agent_test(cassette, timeout = "600s")]
async fn abort_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let client = agent.client();
    let mut events = client.subscribe().await?;
    let prompt = session.prompt_with(
        Prompt::new("Write a detailed 500-word essay about the history of computing.")
            .with_ceiling(TURN),
    );
    let abort = async {
        // Abort once the model is provably streaming its reply (its first text delta), not on
        // a sleep, nor on the busy status: that comes before the request reaches the model, so
        // the abort would never meet the model (and a cassette would hold no traffic).
        let ceiling = tokio::time::sleep(TURN);
        tokio::pin!(ceiling);
        loop {
            tokio::select! {
                _ = &mut ceiling => anyhow::bail!("the model never streamed any text"),
                event = events.next_event() => match event? {
                    Some(Event::MessagePartDelta { session_id, field, .. })
                        if session_id == session.id() && field == "text" => break,
                    Some(_) => {}
                    None => anyhow::bail!("the event stream ended before the model streamed text"),
                },
            }
        }
        session.abort().await?;
        Ok::<(), anyhow::Error>(())
    };
    let (turn, aborted) = tokio::join!(prompt, abort);
    aborted?;
    let turn = match turn {
        Ok(turn) => turn,
        Err(ClientError::TurnTimeout { .. }) => anyhow::bail!("the aborted turn never ended"),
        Err(e) => return Err(e.into()),
    };
    let error = turn.error().map(MessageError::name);
    anyhow::ensure!(
        matches!(error, None | Some("MessageAbortedError")),
        "an aborted turn ended with {error:?}"
    );
    live.evidence().record("abort", json!({"turn_ended": true}));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(cassette, timeout = "600s")]
async fn structured_output(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let schema = json!({
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"]
    });
    let turn = session
        .prompt_with(
            Prompt::new("What is the capital of France?")
                .json_schema(schema)
                .with_ceiling(TURN),
        )
        .await?;
    match turn.structured_or_err() {
        Ok(value) => {
            anyhow::ensure!(
                value["answer"].is_string(),
                "structured output without a string answer"
            );
            live.evidence()
                .record("structured", json!({"answer_is_string": true}));
            live.assert_evidence();
            Ok(())
        }
        Err(ClientError::StructuredOutput { .. }) => Err(live
            .skip("the model did not produce output matching the schema (StructuredOutputError)")
            .into()),
        Err(e) => Err(e.into()),
    }
}
