//! `cassette` scenarios recorded from a scripted upstream reached over HTTPS through each of
//! OpenCode's provider packages, then replayed without it, for the hosted-provider round trip
//! (`harness_selftest::hosted` holds both sides' cases). The evidence is the turn's structure,
//! text and tool output, so a replay passes against the snapshot its recording wrote only when
//! OpenCode did the same with the replayed answers.

use harness_runtime::prelude::*;
use harness_selftest::hosted as case;

/// Runs one turn of `prompt`, records it as evidence and asserts the evidence.
async fn one_turn(live: &mut Live, prompt: &str) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt(prompt).await?;
    live.evidence().record_turn(&turn);
    live.evidence().record("text", &turn.text);
    let outputs: Vec<_> = turn
        .tool_calls
        .iter()
        .map(|call| call.output.as_deref().map(str::trim))
        .collect();
    live.evidence().record("tool_outputs", outputs);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn text(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::TEXT).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn tool_call(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::TOOL_CALL).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR", "LIVE_SNAPSHOT_DIR"])]
async fn after_rate_limit(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::AFTER_RATE_LIMIT).await
}
