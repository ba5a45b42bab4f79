//! Scenarios that meet bad input from the environment or the snapshot folder; `tests/reliability`
//! sets the input and checks the error.

use harness_runtime::prelude::*;

/// A real-model scenario on the fixture agent: the harness checks `OPENCODE_CONFIG_CONTENT` and
/// `TEST_OLLAMA_MODEL` before it starts anything, whichever agent serves.
#[live_agent_test(agent = "fixture", timeout = "60s", requires = ["TEST_OLLAMA_MODEL", "OPENCODE_CONFIG_CONTENT"])]
async fn real_model(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_running());
    Ok(())
}

/// Asserts its evidence against `$LIVE_SNAPSHOT_DIR/bad_input__snapshot.snap` (required, so a
/// plain run never writes into the crate's `snapshots/`).
#[live_agent_test(timeout = "30s", requires = ["LIVE_SNAPSHOT_DIR"])]
async fn snapshot(live: &mut Live) -> anyhow::Result<()> {
    live.evidence().record("answer", 42);
    live.assert_evidence();
    Ok(())
}
