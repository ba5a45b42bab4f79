//! A scenario that needs an environment variable.

use harness_runtime::prelude::*;

#[live_agent_test(requires = ["HARNESS_SELFTEST_TOKEN"])]
async fn needs_token(_live: &mut Live) -> anyhow::Result<()> {
    let token = std::env::var("HARNESS_SELFTEST_TOKEN")?;
    anyhow::ensure!(token == "present", "unexpected token value");
    Ok(())
}
