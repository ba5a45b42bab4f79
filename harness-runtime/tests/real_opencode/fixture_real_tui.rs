//! The real `opencode` 1.18.33 TUI (`opencode attach URL`) against the fixture agent: it gets
//! through start-up with every request it makes answered 2xx. It runs under a pseudo-terminal
//! (`script` from util-linux), in a root made as the harness makes an agent's; what it asked is
//! read from the fixture's own request log (`requests.log` in the agent's home). Without
//! OpenCode or `script` the test is skipped with the reason, and fails under `CI` or
//! `LIVE_STRICT=1`.

use crate::fixture_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use fixture_common::*;
use harness_selftest::prerequisites::{self, Prerequisite, Test};
use harness_selftest::test;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(fixture_real_tui_attach_gets_past_start_up_with_every_request_answered)
            .needs(Prerequisite::OpenCode)
            .needs(Prerequisite::Script),
        test!(a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict),
    ]
}

/// The TUI, found as the harness finds OpenCode (`LIVE_OPENCODE_BIN`, `node_modules`, `PATH`).
fn opencode() -> PathBuf {
    harness_runtime::testing::find_opencode(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The requests the TUI's start-up must make (measured on 1.18.33), its last one included.
const START_UP: [&str; 13] = [
    "GET /path",
    "GET /project/current",
    "GET /config",
    "GET /config/providers",
    "GET /provider",
    "GET /agent",
    "GET /global/event",
    "GET /command",
    "GET /session/status",
    "GET /vcs",
    "GET /api/agent",
    "GET /api/command",
    "GET /experimental/workspace/status",
];
/// How often the request log is read while waiting for the start-up.
const POLL: Duration = Duration::from_millis(50);

/// Every process under `pid` (children first found through `/proc`).
fn descendants(pid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut queue = vec![pid];
    while let Some(p) = queue.pop() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

/// The TUI under `script`, stopped (its whole tree) on drop.
struct Tui {
    child: std::process::Child,
}

impl Drop for Tui {
    fn drop(&mut self) {
        let pid = self.child.id() as i32;
        // `script` puts the TUI in a session of its own: collect the tree before signalling.
        let tree = descendants(pid);
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        for p in tree {
            let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

fn start_tui(url: &str, client: &ClientRoot) -> Tui {
    use std::os::unix::process::CommandExt;
    let line = format!("{} attach {url}", opencode().display());
    let child = client
        .command("script")
        .args(["-qfc", &line, "/dev/null"])
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start `script` with the TUI");
    Tui { child }
}

/// `(request, status)` of each line of the request log.
fn read_log(home: &Path) -> Vec<(String, u16)> {
    std::fs::read_to_string(home.join("requests.log"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let (request, status) = line.rsplit_once(' ')?;
            Some((request.to_string(), status.parse().ok()?))
        })
        .collect()
}

fn fixture_real_tui_attach_gets_past_start_up_with_every_request_answered() {
    let home = tempfile::tempdir().unwrap();
    let client = ClientRoot::new("fixture_real_tui::attach");
    let agent = Agent::ready(home.path());
    let _tui = start_tui(&agent.base, &client);

    // Until every start-up request was made; the first one answered other than 2xx fails at once.
    let within = ceiling(45.0);
    let deadline = Instant::now() + within;
    loop {
        let log = read_log(home.path());
        let failed: Vec<&(String, u16)> = log
            .iter()
            .filter(|(_, s)| !(200..300).contains(s))
            .collect();
        assert!(
            failed.is_empty(),
            "the fixture did not answer these TUI requests with 2xx: {failed:?}; log: {log:?}"
        );
        let made: HashSet<&str> = log
            .iter()
            .map(|(r, _)| r.split('?').next().unwrap_or(r))
            .collect();
        let missing: Vec<&str> = START_UP.into_iter().filter(|r| !made.contains(r)).collect();
        if missing.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "within {within:?} the TUI did not make these start-up requests: {missing:?}; it \
             made: {log:?}"
        );
        std::thread::sleep(POLL);
    }
}

/// Where OpenCode is missing (here: `LIVE_OPENCODE_BIN` names no file), the TUI test is skipped
/// with the reason, flagged ignored when listed (for nextest), and failed under `CI` or
/// `LIVE_STRICT=1`, without running.
fn a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict() {
    prerequisites::assert_skipped_without_opencode(
        "fixture_real_tui::fixture_real_tui_attach_gets_past_start_up_with_every_request_answered",
    );
}
