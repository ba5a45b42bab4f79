//! A `cassette` scenario that has no cassette (`harness-selftest/cassettes/` holds none): without
//! the real model's variables it is skipped with the command that records one, and it fails under
//! `LIVE_STRICT=1`, `LIVE_CASSETTE=replay` or `LIVE_CASSETTE=record`. None of that starts its
//! body, so no OpenCode is needed; `tests/runner/cli.rs` drives it.

use harness_runtime::prelude::*;

/// Like every scenario here that starts an agent, it requires `SELFTEST_SCRATCH`: a plain run of
/// the binary in a shell that has a real model's variables must not start one.
#[live_agent_test(cassette, timeout = "600s", requires = ["SELFTEST_SCRATCH"])]
async fn without_cassette(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Reply with the word OK.").await?;
    anyhow::ensure!(
        turn.error().is_none(),
        "the turn failed: {:?}",
        turn.error()
    );
    Ok(())
}
