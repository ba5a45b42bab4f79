//! `ignore = "…"`: not run unless asked for.

use harness_runtime::prelude::*;

#[live_agent_test(ignore = "demonstrates ignore")]
async fn ignored_with_reason(live: &mut Live) -> anyhow::Result<()> {
    anyhow::ensure!(live.name() == "skips::ignored_with_reason");
    Ok(())
}
