//! Runs after `hygiene::*` (names sort `hygiene::` before `hygiene_probe::`, and
//! `tests/hygiene.rs` runs one trial at a time): inside the same runner, before its reaper could
//! sweep anything, no process may carry an owner mark of this runner.

use harness_runtime::prelude::*;

/// Owner marks are `live-<runner pid>-<random>`.
fn own_mark_prefix() -> String {
    format!("LIVE_HARNESS_OWNER=live-{}-", std::process::id())
}

#[live_agent_test(timeout = "30s", requires = ["SELFTEST_SCRATCH"])]
async fn no_owned_process_remains(_live: &mut Live) -> anyhow::Result<()> {
    let prefix = own_mark_prefix();
    let mut left = Vec::new();
    for entry in std::fs::read_dir("/proc")? {
        let Some(pid) = entry?
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        // A zombie's environment reads empty; an unreadable one is another user's.
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|e| e.starts_with(prefix.as_bytes()))
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            left.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    anyhow::ensure!(
        left.is_empty(),
        "owned processes left behind:\n{}",
        left.join("\n")
    );
    Ok(())
}
