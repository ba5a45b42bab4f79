//! Two scenarios that meet inside one runner process (`needs_peer`), without an agent: each
//! says it arrived and waits, bounded, for the other. Driven by `tests/runner/nextest.rs`, which
//! sets `SELFTEST_PEERS` (so a whole run of the binary lists them ignored and never waits).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness_runtime::prelude::*;
use harness_runtime::scaled;

/// Whether each side arrived.
static ARRIVED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];

/// How long a side waits for the other before skipping, before scaling.
const WAIT: Duration = Duration::from_secs(60);

async fn meet(live: &mut Live, me: usize) -> anyhow::Result<()> {
    ARRIVED[me].store(true, Ordering::SeqCst);
    let deadline = Instant::now() + scaled(WAIT);
    while !ARRIVED[1 - me].load(Ordering::SeqCst) {
        if Instant::now() > deadline {
            return Err(live.skip("the peer did not run alongside").into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[live_agent_test(requires = ["SELFTEST_PEERS"], needs_peer = "right", timeout = "120s")]
async fn left(live: &mut Live) -> anyhow::Result<()> {
    meet(live, 0).await
}

#[live_agent_test(requires = ["SELFTEST_PEERS"], needs_peer = "left", timeout = "120s")]
async fn right(live: &mut Live) -> anyhow::Result<()> {
    meet(live, 1).await
}
