//! A scenario that snapshots its evidence, for `tests/runner/snapshots.rs`: the snapshot must name
//! this file, and insta must look for the workspace from this crate's folder, not the runtime's. It
//! requires `LIVE_SNAPSHOT_DIR` (and `SELFTEST_SCRATCH`, as every scenario a test drives), so no
//! run writes a snapshot into the checkout.

use harness_runtime::prelude::*;

#[live_agent_test(timeout = "30s", requires = ["SELFTEST_SCRATCH", "LIVE_SNAPSHOT_DIR"])]
async fn names_its_own_file(live: &mut Live) -> anyhow::Result<()> {
    live.evidence().record("scenario", live.name());
    live.assert_evidence();
    Ok(())
}
