//! A runner that is SIGKILLed mid-scenario: `tests/runs/hygiene.rs` kills it once this scenario
//! says its agent and the agent's detached child run. Only the reaper can clean up then.

use harness_runtime::fixture::Fault;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{read_pid, record_owned};

/// The progress line `tests/runs/hygiene.rs` waits for before it kills the runner.
pub(crate) const READY: &str = "agent and detached child running; kill me now";

#[live_agent_test(agent = "fixture", timeout = "120s", requires = ["SELFTEST_SCRATCH"])]
async fn waits_to_be_killed(live: &mut Live) -> anyhow::Result<()> {
    live.fixture().inject(Fault::DetachedGrandchild)?;
    let agent = live.opencode().await?;
    let token = owner_token(&agent);
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("server", server, &token)?;
    let detached = read_pid(&agent.root().join("home").join("grandchild.pid"))?;
    record_owned("detached", detached, &token)?;
    live.progress(READY);
    std::future::pending::<()>().await;
    Ok(())
}
