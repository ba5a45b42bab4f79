//! What the hygiene scenarios share with `tests/hygiene.rs`: a scratch dir (`SELFTEST_SCRATCH`)
//! where they list the pids they made the harness start, so the test can check each is gone.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

/// The variable naming the scratch dir; scenarios that start agents require it, so a plain run
/// of the binary (and `cargo test --workspace`) reports them skipped instead of starting servers.
pub(crate) const SCRATCH: &str = "SELFTEST_SCRATCH";

/// The variable every process of the harness carries (`harness_runtime::process`).
const OWNER_ENV: &str = "LIVE_HARNESS_OWNER";

/// Appends `<label> <pid>` to `$SELFTEST_SCRATCH/pids`.
pub(crate) fn record_pid(label: &str, pid: u32) -> anyhow::Result<()> {
    let dir = std::env::var_os(SCRATCH).context("SELFTEST_SCRATCH is not set")?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new(&dir).join("pids"))?;
    writeln!(file, "{label} {pid}")?;
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

/// Records `pid` after checking it runs with the agent's owner mark: the process the harness
/// must clean up really existed, and is really one of this agent's.
pub(crate) fn record_owned(label: &str, pid: u32, token: &str) -> anyhow::Result<()> {
    let owner = owner_of(pid);
    anyhow::ensure!(
        owner.as_deref() == Some(token),
        "{label} (pid {pid}) does not run with the agent's owner mark: {owner:?}"
    );
    record_pid(label, pid)
}
