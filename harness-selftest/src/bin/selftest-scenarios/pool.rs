//! The run's pool under nextest (one process per test), driven by the reliability suite's
//! `pool` tests: a scenario that holds its lease until it is killed, one that fails on its lease.

use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{record_owned, record_pid};

/// The progress line the reliability test waits for before it kills this process.
pub(crate) const LEASED: &str = "holds a lease of the run's pool; kill me now";

#[live_agent_test(timeout = "120s", requires = ["SELFTEST_SCRATCH", "SELFTEST_POOL_HOLD"])]
async fn holds_its_lease(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("held", server, &owner_token(&agent))?;
    record_pid("lessee", std::process::id())?;
    live.progress(LEASED);
    std::future::pending::<()>().await;
    Ok(())
}

#[live_agent_test(timeout = "120s", requires = ["SELFTEST_SCRATCH", "SELFTEST_POOL_FAIL"])]
async fn fails_on_its_lease(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    anyhow::bail!("fails on purpose, so its roots are kept as evidence")
}
