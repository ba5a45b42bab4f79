//! `cassette` scenarios recorded from a scripted upstream and replayed, for `tests/runs/cassettes`:
//! one turn each, whose answer the upstream scripts by the prompt (`harness_selftest::round_trip`
//! holds both sides' cases). The evidence is the turn's structure (messages and parts, tool calls
//! and their status, structured output, error names), its text and tool output, and the model
//! requests it took, so a replay passes against the snapshot its recording wrote only when
//! OpenCode did the same with the replayed answers.
//!
//! They require `LIVE_CASSETTE_DIR` and `LIVE_SNAPSHOT_DIR` (no run writes into the checkout) and
//! `SELFTEST_SCRATCH`, as every scenario a test drives.

use harness_runtime::prelude::*;
use harness_selftest::round_trip::{self as case, DELIBERATE_FAILURE};

/// Runs one turn of `prompt` (its text with `SELFTEST_PROMPT_SUFFIX` appended), records it as
/// evidence and asserts the evidence; fails after that under `SELFTEST_FAIL_AFTER_TURN`.
async fn round_trip(live: &mut Live, prompt: Prompt) -> anyhow::Result<()> {
    round_trip_needing(live, prompt, None).await
}

/// [`round_trip`], skipped as a probe is when the model did not call the tool `tool` (the
/// upstream `tests/runs/cassettes` scripts differently to show a verifying run's drift).
async fn round_trip_needing(
    live: &mut Live,
    prompt: Prompt,
    tool: Option<&str>,
) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt_with(prompt).await?;
    if let Some(tool) = tool.filter(|tool| !turn.tool_calls.iter().any(|c| c.tool == *tool)) {
        return Err(live
            .skip(format!("the model did not call the {tool} tool"))
            .into());
    }
    live.evidence().record_turn(&turn);
    live.evidence().record("text", &turn.text);
    live.evidence().record("text_deltas", turn.text_delta_count);
    let outputs: Vec<_> = turn
        .tool_calls
        .iter()
        .map(|call| call.output.as_deref().map(str::trim))
        .collect();
    live.evidence().record("tool_outputs", outputs);
    // Without how each was answered: the script while recording, the cassette on replay.
    let requests: Vec<_> = live
        .model()
        .requests()
        .iter()
        .map(|r| {
            json!({
                "roles": r.message_roles,
                "last_user_text": r.last_user_text,
                "tools": r.tools_offered.len(),
                "tool_choice": r.tool_choice,
                "response_format": r.response_format.is_some(),
            })
        })
        .collect();
    live.evidence().record("model_requests", requests);
    live.assert_evidence();
    if std::env::var_os(case::FAIL_AFTER_TURN).is_some() {
        anyhow::bail!(DELIBERATE_FAILURE);
    }
    Ok(())
}

/// The prompt `text`, changed by `SELFTEST_PROMPT_SUFFIX` when set.
fn prompt(text: &str) -> Prompt {
    let suffix = std::env::var(case::PROMPT_SUFFIX).unwrap_or_default();
    Prompt::new(format!("{text}{suffix}"))
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn text_in_deltas(live: &mut Live) -> anyhow::Result<()> {
    round_trip(live, prompt(case::TEXT_IN_DELTAS)).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn tool_call(live: &mut Live) -> anyhow::Result<()> {
    round_trip_needing(live, prompt(case::TOOL_CALL), Some("bash")).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn structured_output(live: &mut Live) -> anyhow::Result<()> {
    round_trip(
        live,
        prompt(case::STRUCTURED_OUTPUT).json_schema(case::schema()),
    )
    .await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn error_mid_stream(live: &mut Live) -> anyhow::Result<()> {
    round_trip(live, prompt(case::ERROR_MID_STREAM)).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn server_error_then_text(live: &mut Live) -> anyhow::Result<()> {
    // The upstream's error is what this case records: relayed as it comes, not retried.
    live.record_upstream_errors();
    round_trip(live, prompt(case::SERVER_ERROR)).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn dropped_connection_then_text(live: &mut Live) -> anyhow::Result<()> {
    round_trip(live, prompt(case::DROPPED_CONNECTION)).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn refused_request(live: &mut Live) -> anyhow::Result<()> {
    // The upstream's error is what this case records: relayed as it comes, not retried.
    live.record_upstream_errors();
    round_trip(live, prompt(case::REFUSED_REQUEST)).await
}
