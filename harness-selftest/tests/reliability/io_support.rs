//! Shared by `ports` and `streams`: ceilings, the helper-process bin, and memory measured in a
//! fresh process (tests of other modules share this one, and a process reuses freed heap).

use std::path::PathBuf;
use std::time::Duration;

use harness_runtime::testing;

/// A ceiling scaled by `LIVE_TIMEOUT_SCALE`, as the harness scales its own.
pub fn ceiling(secs: u64) -> Duration {
    harness_runtime::scaled(Duration::from_secs(secs))
}

/// Points the fixture agent and the helper roles (reaper, sandbox launcher) of this process at `selftest-scenarios`, a suite
/// binary whose `main` dispatches helper roles as a user's does: this binary's `main` does not,
/// so re-executing it would re-run its tests.
pub fn use_roles_bin() {
    let bin = PathBuf::from(crate::SCENARIOS);
    testing::use_fixture_program(bin.clone());
    testing::use_role_command(bin, Vec::new());
}

pub const MIB: u64 = 1 << 20;

/// `n` bytes as MiB with one decimal, for the figures.
pub fn mib(n: u64) -> String {
    format!("{:.1} MiB", n as f64 / MIB as f64)
}

/// Set in a fresh process of this binary that runs one measured case alone.
const CHILD_ENV: &str = "RELIABILITY_MEASURED_CHILD";
/// The line a measured child ends with.
const GROWTH_LINE: &str = "measured: peak RSS growth ";

/// Whether this process is the fresh child of [`measured_in_child`]; the entry point returns
/// at once otherwise (under `--include-ignored` too).
pub fn in_measured_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// This process's `VmHWM`/`VmRSS` (`/proc/self/status`) in bytes.
fn status_bytes(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

/// In the child: runs `case` and reports the peak resident set over the one at its start. A
/// fresh process has no freed heap to reuse, so the peak is what the case itself needed.
pub fn report_growth<F: std::future::Future<Output = ()>>(case: F) {
    let before = status_bytes("VmRSS:");
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
        .block_on(case);
    let peak = status_bytes("VmHWM:");
    println!("{GROWTH_LINE}{}", peak.saturating_sub(before));
}

/// Runs the ignored entry point `name` alone in a fresh process of this binary (within
/// `within`), echoes its figures, and returns its peak RSS growth in bytes.
pub fn measured_in_child(name: &str, within: Duration) -> u64 {
    use std::io::Read;
    let mut child = std::process::Command::new(std::env::current_exe().expect("this binary"))
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD_ENV, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run this binary again");
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let (mut o, mut e) = (String::new(), String::new());
        let _ = out.read_to_string(&mut o);
        let _ = err.read_to_string(&mut e);
        (o, e)
    });
    let deadline = std::time::Instant::now() + within;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        // Polling a child's exit: there is no portable exit notification to wait on here.
        std::thread::sleep(Duration::from_millis(20));
    };
    let (stdout, stderr) = reader.join().expect("the reader thread");
    let Some(status) = status else {
        panic!("{name} did not finish within {within:?}:\n{stdout}\n{stderr}");
    };
    assert!(
        status.success(),
        "{name} failed ({status}):\n{stdout}\n{stderr}"
    );
    let mut growth = None;
    // libtest writes `test <name> ... ` before the case's first line, on the same line.
    for line in stdout.lines() {
        if let Some(at) = line.find(GROWTH_LINE) {
            growth = line[at + GROWTH_LINE.len()..].trim().parse().ok();
        } else if let Some(at) = line.find("streams: ") {
            println!("{}", &line[at..]);
        }
    }
    growth.unwrap_or_else(|| panic!("{name} reported no growth; did it run?\n{stdout}"))
}
