//! The real `opencode` 1.18.33 TUI (`opencode attach URL`) against the fixture agent (issue #16):
//! it gets through start-up with every request it makes answered 2xx. It runs under a
//! pseudo-terminal (`script` from util-linux); what it asked is read from the fixture's own
//! request log (`requests.log` in the agent's home).

mod fixture_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use fixture_common::*;
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

/// The pinned CLI; its absence fails the test (CI runs `npm ci`), it is never skipped.
fn opencode() -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/opencode");
    assert!(
        bin.exists(),
        "the real opencode CLI is missing at node_modules/.bin/opencode; run `npm ci` in the \
         workspace root (it installs the version pinned in package.json)"
    );
    bin
}

/// The last request of the TUI's start-up (measured on 1.18.33), and the ones it must make.
const LAST_START_UP_REQUEST: &str = "GET /experimental/workspace/status";
const START_UP: [&str; 12] = [
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
];

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

fn start_tui(url: &str, workspace: &Path, scratch: &Path) -> Tui {
    use std::os::unix::process::CommandExt;
    assert!(
        Path::new("/usr/bin/script").exists() || which("script"),
        "`script` (util-linux) is needed to give the TUI a terminal; install util-linux"
    );
    std::fs::create_dir_all(scratch.join("tmp")).unwrap();
    let line = format!("{} attach {url}", opencode().display());
    let child = std::process::Command::new("script")
        .args(["-qfc", &line, "/dev/null"])
        .current_dir(workspace)
        .env("HOME", scratch.join("home"))
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env("XDG_DATA_HOME", scratch.join("data"))
        .env("XDG_CACHE_HOME", scratch.join("cache"))
        .env("XDG_STATE_HOME", scratch.join("state"))
        .env("TMPDIR", scratch.join("tmp"))
        .env("TERM", "xterm-256color")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("start `script` with the TUI");
    Tui { child }
}

fn which(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).exists()))
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

#[test]
fn fixture_real_tui_attach_gets_past_start_up_with_every_request_answered() {
    let home = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let tui = start_tui(&agent.base, workspace.path(), scratch.path());

    // Until the known last start-up request arrived and a second of quiet followed; a start-up
    // that stalls (a request answered badly) ends after 5 s of quiet; 45 s at most.
    let within = ceiling(45.0);
    let started = Instant::now();
    let mut last_change = Instant::now();
    let mut seen = 0;
    let log = loop {
        let log = read_log(home.path());
        if log.len() != seen {
            seen = log.len();
            last_change = Instant::now();
        }
        let ended = log.iter().any(|(r, _)| r == LAST_START_UP_REQUEST);
        let quiet = last_change.elapsed();
        if (ended && quiet > Duration::from_secs(1)) || (seen > 0 && quiet > ceiling(5.0)) {
            break log;
        }
        if started.elapsed() > within {
            panic!("the TUI made no request within {within:?}: did it start?");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(tui);

    let failed: Vec<&(String, u16)> = log
        .iter()
        .filter(|(_, s)| !(200..300).contains(s))
        .collect();
    assert!(
        failed.is_empty(),
        "the fixture did not answer these TUI requests with 2xx: {failed:?}"
    );
    let paths: HashSet<&str> = log
        .iter()
        .map(|(r, _)| r.split('?').next().unwrap_or(r))
        .collect();
    let missing: Vec<&str> = START_UP
        .into_iter()
        .filter(|r| !paths.contains(r))
        .collect();
    assert!(
        missing.is_empty(),
        "the TUI's start-up requests are missing from the log: {missing:?}; log: {log:?}"
    );
}
