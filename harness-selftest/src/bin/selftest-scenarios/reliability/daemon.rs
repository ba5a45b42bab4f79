//! A daemon started the way tool commands start them: a shell backgrounds a subshell that ignores
//! SIGTERM and `exec`s `setsid sleep 600`, then the shell exits. The sleep is double-forked (its
//! parent is gone at once, it is reparented to init), in a session of its own, deaf to SIGTERM,
//! and it inherits the agent's environment — so only the harness's owner-mark sweep can find it.
//!
//! The fixture agent is this binary re-executed (`HARNESS_RUNTIME_ROLE=fixture-agent`); a scenario
//! asks for the daemon with `AgentOptions::env(DAEMON, "1")`, and `main` starts it here before the
//! runtime's role dispatch, as an agent's tool would while the agent runs.

use std::process::{Command, Stdio};

use harness_runtime::testing::OWNER_ENV;
use harness_selftest::scratch::{read_pid, record_owned, record_pid};

/// The agent variable that asks for a daemon.
pub(crate) const DAEMON: &str = "RELIABILITY_DAEMON";
/// Where the daemon's pid lands, in the agent's home.
pub(crate) const PID_FILE: &str = "daemon.pid";

const SCRIPT: &str = "(trap '' TERM; exec setsid sleep 600) </dev/null >/dev/null 2>&1 & \
                      echo $! > \"$HOME/daemon.pid\"";

/// In the fixture agent's `serve` role with [`DAEMON`] set: starts the daemon and records the
/// agent's and the daemon's pids. Elsewhere: nothing.
pub(crate) fn start_if_asked() {
    let is_agent = std::env::var("HARNESS_RUNTIME_ROLE").is_ok_and(|r| r == "fixture-agent");
    let serves = std::env::args().nth(1).is_some_and(|a| a == "serve");
    if !is_agent || !serves || std::env::var_os(DAEMON).is_none() {
        return;
    }
    if let Err(e) = start() {
        // The agent still starts: the scenario then fails on the missing pid file.
        eprintln!("reliability daemon: {e:#}");
    }
}

fn start() -> anyhow::Result<()> {
    let home = std::env::var_os("HOME").ok_or_else(|| anyhow::anyhow!("HOME is not set"))?;
    let status = Command::new("sh")
        .args(["-c", SCRIPT])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()?;
    anyhow::ensure!(status.success(), "the daemon's shell failed: {status}");
    let token = std::env::var(OWNER_ENV)
        .map_err(|_| anyhow::anyhow!("the agent runs without {OWNER_ENV}"))?;
    record_owned("agent", std::process::id(), &token)?;
    let daemon = read_pid(&std::path::Path::new(&home).join(PID_FILE))?;
    // Not `record_owned`: the daemon may be inside `execve` right now, when its environment
    // reads empty; it inherited the agent's, which was just checked.
    record_pid("daemon", daemon)
}
