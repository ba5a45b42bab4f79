//! Runs after `hygiene::*` (names sort `hygiene::` before `hygiene_probe::`, and
//! `tests/runs/hygiene.rs` runs one trial at a time): inside the same runner, before its reaper
//! could sweep anything, no process may carry an owner mark of this runner.

use harness_runtime::prelude::*;
use harness_runtime::testing::OWNER_ENV;
use harness_selftest::procs;

/// Owner marks are `live-<runner pid>-<random>`.
fn own_mark_prefix() -> String {
    format!("{OWNER_ENV}=live-{}-", std::process::id())
}

#[live_agent_test(timeout = "30s", requires = ["SELFTEST_SCRATCH"])]
async fn no_owned_process_remains(_live: &mut Live) -> anyhow::Result<()> {
    let prefix = own_mark_prefix();
    // A zombie's environment reads empty (and `table` leaves zombies out); an unreadable one is
    // another user's.
    let left: Vec<String> = procs::table()
        .into_iter()
        .filter(|p| procs::environ_has(p.pid, |e| e.starts_with(prefix.as_bytes())))
        .map(|p| procs::describe(p.pid))
        .collect();
    anyhow::ensure!(
        left.is_empty(),
        "owned processes left behind:\n{}",
        left.join("\n")
    );
    Ok(())
}
