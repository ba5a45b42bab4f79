//! What the scenarios share with `tests/reliability`: a scratch dir (`RELIABILITY_SCRATCH`) where
//! every process the harness was made to start is listed (`<label> <pid>`), after checking it runs
//! with an owner mark, so the test can check each one is gone.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// The variable naming the scratch dir.
pub(crate) const SCRATCH: &str = "RELIABILITY_SCRATCH";
/// The variable every process of the harness carries (`harness_runtime::process`).
const OWNER_ENV: &str = "LIVE_HARNESS_OWNER";

/// Appends `<label> <pid>` to `$RELIABILITY_SCRATCH/pids` (one `write` per line: agents and
/// scenarios append concurrently).
pub(crate) fn record_pid(label: &str, pid: u32) -> anyhow::Result<()> {
    let dir = std::env::var_os(SCRATCH).context("RELIABILITY_SCRATCH is not set")?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new(&dir).join("pids"))?;
    file.write_all(format!("{label} {pid}\n").as_bytes())?;
    Ok(())
}

/// The pid written in `file` (by the fixture agent or a tool command).
pub(crate) fn read_pid(file: &Path) -> anyhow::Result<u32> {
    let text =
        std::fs::read_to_string(file).with_context(|| format!("no pid file {}", file.display()))?;
    text.trim()
        .parse()
        .with_context(|| format!("not a pid: {text:?}"))
}

/// The owner mark in `pid`'s environment, while it runs.
pub(crate) fn owner_of(pid: u32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{OWNER_ENV}=");
    environ.split(|b| *b == 0).find_map(|entry| {
        let entry = std::str::from_utf8(entry).ok()?;
        entry.strip_prefix(&prefix).map(str::to_string)
    })
}

/// Records `pid` after checking it runs with an owner mark: the process the harness must clean
/// up really existed, and really was started through the harness.
pub(crate) fn record_owned(label: &str, pid: u32) -> anyhow::Result<()> {
    anyhow::ensure!(
        owner_of(pid).is_some(),
        "{label} (pid {pid}) does not run with an owner mark"
    );
    record_pid(label, pid)
}
