//! The scratch dir a sandboxed run shares with its scenarios (`SELFTEST_SCRATCH`): every process
//! the harness was made to start is listed there as `<label> <pid>`, after checking it runs with
//! its agent's owner mark, so the test can check each one is gone.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use harness_runtime::testing::OWNER_ENV;

use crate::procs;

/// The variable naming the scratch dir. Scenarios that start agents require it, so a plain run
/// of the binary (and `cargo test --workspace`) reports them skipped instead of starting servers.
pub const SCRATCH: &str = "SELFTEST_SCRATCH";

/// The file of the scratch dir that holds the pids.
const PIDS: &str = "pids";

/// Appends `<label> <pid>` to `$SELFTEST_SCRATCH/pids` (one `write` per line: agents and
/// scenarios append concurrently).
pub fn record_pid(label: &str, pid: u32) -> anyhow::Result<()> {
    let dir = std::env::var_os(SCRATCH).with_context(|| format!("{SCRATCH} is not set"))?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new(&dir).join(PIDS))?;
    file.write_all(format!("{label} {pid}\n").as_bytes())?;
    Ok(())
}

/// Records `pid` after checking it runs with the owner mark `token`: the process the harness
/// must clean up really existed, and is really one of that agent's.
pub fn record_owned(label: &str, pid: u32, token: &str) -> anyhow::Result<()> {
    let owner = procs::environ_value(pid, OWNER_ENV);
    anyhow::ensure!(
        owner.as_deref() == Some(token),
        "{label} (pid {pid}) does not run with the agent's owner mark: {owner:?}"
    );
    record_pid(label, pid)
}

/// The pid written in `file` (by the fixture agent or a tool command).
pub fn read_pid(file: &Path) -> anyhow::Result<u32> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("no pid file {}", file.display()))?;
    text.trim()
        .parse()
        .with_context(|| format!("not a pid: {text:?}"))
}

/// The `(label, pid)` lines recorded in the scratch dir `dir`.
pub fn recorded(dir: &Path) -> Vec<(String, u32)> {
    std::fs::read_to_string(dir.join(PIDS))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (label, pid) = line.split_once(' ')?;
            Some((label.to_string(), pid.parse().ok()?))
        })
        .collect()
}

/// The file of the scratch dir whose creation lets a held scenario end: the test writes it once
/// it has looked at the runner while the scenario still ran.
pub const RELEASE: &str = "release";

/// Creates [`RELEASE`] in the scratch dir `dir`.
pub fn release(dir: &Path) {
    std::fs::write(dir.join(RELEASE), b"").expect("write the release file in the scratch dir");
}

/// Whether the test created [`RELEASE`] in this run's scratch dir.
pub fn released() -> anyhow::Result<bool> {
    let dir = std::env::var_os(SCRATCH).with_context(|| format!("{SCRATCH} is not set"))?;
    Ok(Path::new(&dir).join(RELEASE).exists())
}
