//! Two scenarios on one shared server at once (the default isolation), driven by
//! `tests/runs/hygiene.rs` with two trials at a time: `fails_beside_its_neighbour` leases the
//! server, waits for its neighbour to lease it too, and fails; `outlives_its_failed_neighbour`
//! waits until that failure was released (the failed root's `leased-by` is written then), and
//! only then has its turn: the server the failure retired still serves it to its end. Each
//! records `<label> <server pid>` in the scratch dir.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use harness_runtime::prelude::*;
use harness_runtime::scaled;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::record_owned;

/// Whether each side holds its lease.
static LEASED: [AtomicBool; 2] = [AtomicBool::new(false), AtomicBool::new(false)];
/// The failing side's root, where its release writes `leased-by`.
static FAILED_ROOT: Mutex<Option<PathBuf>> = Mutex::new(None);
/// How long a side waits for the other, before scaling.
const WAIT: Duration = Duration::from_secs(60);

/// Waits, bounded, until `ready` says so.
async fn until(what: &str, ready: impl Fn() -> bool) -> anyhow::Result<()> {
    let deadline = Instant::now() + scaled(WAIT);
    while !ready() {
        anyhow::ensure!(
            Instant::now() < deadline,
            "{what} did not happen within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[live_agent_test(
    timeout = "120s",
    requires = ["SELFTEST_SCRATCH"],
    needs_peer = "outlives_its_failed_neighbour"
)]
async fn fails_beside_its_neighbour(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("failing", pid, &owner_token(&agent))?;
    *FAILED_ROOT.lock().unwrap() = Some(agent.root().to_path_buf());
    LEASED[0].store(true, Ordering::SeqCst);
    until("the neighbour's lease", || LEASED[1].load(Ordering::SeqCst)).await?;
    anyhow::bail!("failed on purpose beside its neighbour")
}

#[live_agent_test(
    timeout = "120s",
    requires = ["SELFTEST_SCRATCH"],
    needs_peer = "fails_beside_its_neighbour"
)]
async fn outlives_its_failed_neighbour(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Still here."));
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("neighbour", pid, &owner_token(&agent))?;
    LEASED[1].store(true, Ordering::SeqCst);
    let released = || {
        FAILED_ROOT
            .lock()
            .unwrap()
            .as_ref()
            .is_some_and(|root| root.join("leased-by").exists())
    };
    until("the failed neighbour's release", released).await?;
    // Its release went on to retire the server; a stop would have come right after.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let turn = agent.create_session().await?.prompt("Hello").await?;
    anyhow::ensure!(
        turn.text == "Still here.",
        "the server answered {:?}",
        turn.text
    );
    Ok(())
}
