//! Finds and kills every process that carries an owner token, wherever it was reparented.
//!
//! Linux only (`/proc/<pid>/environ`); elsewhere the sweep finds nothing and ownership rests on
//! the process group. Limits, stated plainly: a descendant that clears its environment
//! (`env -i …`) or runs as another user escapes the sweep.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::token::OWNER_ENV;

/// How long one sweep keeps killing: processes that fork while being killed are caught by the
/// next round; the ceiling bounds a fork bomb.
const SWEEP_CEILING: Duration = Duration::from_secs(5);

/// The `NAME=value` environment entries that mark the owners in `tokens`.
fn marks(tokens: &[String]) -> HashSet<Vec<u8>> {
    tokens
        .iter()
        .map(|t| format!("{OWNER_ENV}={t}").into_bytes())
        .collect()
}

/// The live processes (not zombies) that carry one of `tokens`, other than this process.
pub(crate) fn carriers(tokens: &[String]) -> Vec<u32> {
    let marks = marks(tokens);
    imp::pids()
        .into_iter()
        .filter(|&pid| imp::carries(pid, &marks))
        .collect()
}

/// SIGKILLs every process carrying one of `tokens`, round after round until none is left (or the
/// ceiling passes). Returns how many processes it killed.
pub(crate) fn sweep(tokens: &[String]) -> usize {
    if tokens.is_empty() {
        return 0;
    }
    let marks = marks(tokens);
    let deadline = Instant::now() + crate::settings::scaled(SWEEP_CEILING);
    let mut killed = 0;
    let mut quiet_rounds = 0;
    loop {
        let round = imp::kill_round(&marks, deadline);
        killed += round;
        quiet_rounds = if round == 0 { quiet_rounds + 1 } else { 0 };
        // One empty scan is not proof: a process in the middle of `execve` reads an empty
        // environment for a moment (a daemon exec'ing as its parent is killed escaped that way),
        // so the sweep ends only after a second empty scan a moment later.
        if quiet_rounds >= QUIET_ROUNDS || Instant::now() >= deadline {
            return killed;
        }
        std::thread::sleep(QUIET_PAUSE);
    }
}

/// Empty scans in a row that end a sweep, and the pause between rounds.
const QUIET_ROUNDS: u32 = 2;
const QUIET_PAUSE: Duration = Duration::from_millis(20);

#[cfg(target_os = "linux")]
mod imp {
    use std::collections::HashSet;
    use std::os::fd::OwnedFd;
    use std::time::Instant;

    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use rustix::process::{self, Pid, PidfdFlags, Signal};

    /// Every numeric entry of `/proc` except this process.
    pub(super) fn pids() -> Vec<u32> {
        let me = std::process::id();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|&pid| pid != me)
            .collect()
    }

    /// Whether `pid`'s environment holds one of `marks`. A zombie's environment reads empty, so
    /// dead processes never match; unreadable ones (other users) never match either.
    pub(super) fn carries(pid: u32, marks: &HashSet<Vec<u8>>) -> bool {
        match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(environ) => environ
                .split(|b| *b == 0)
                .any(|entry| marks.contains(entry)),
            Err(_) => false,
        }
    }

    /// A pidfd pins the process identity, so a recycled pid is never signalled by mistake.
    pub(super) fn pidfd_open(pid: u32) -> Option<OwnedFd> {
        let pid = Pid::from_raw(i32::try_from(pid).ok()?)?;
        process::pidfd_open(pid, PidfdFlags::empty()).ok()
    }

    pub(super) fn pidfd_kill(fd: &OwnedFd) -> bool {
        process::pidfd_send_signal(fd, Signal::KILL).is_ok()
    }

    /// A pidfd turns readable when its process has exited: wait for that, up to `deadline`.
    pub(super) fn wait_exit(fd: &OwnedFd, deadline: Instant) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(timeout) = Timespec::try_from(left) else {
            return;
        };
        // An interrupted or failed poll only ends the wait early; the next round re-checks.
        let _ = poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&timeout));
    }

    /// One pass over `/proc`: kill every carrier, then wait for each to exit.
    pub(super) fn kill_round(marks: &HashSet<Vec<u8>>, deadline: Instant) -> usize {
        let mut pending = Vec::new();
        let mut killed = 0;
        for pid in pids() {
            // Open the pidfd first, then read the environment: both then refer to one process.
            let fd = pidfd_open(pid);
            if !carries(pid, marks) {
                continue;
            }
            let sent = match &fd {
                Some(fd) => pidfd_kill(fd),
                None => nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                )
                .is_ok(),
            };
            if sent {
                killed += 1;
                pending.extend(fd);
            }
        }
        for fd in &pending {
            wait_exit(fd, deadline);
        }
        if pending.len() < killed {
            // Without pidfds there is no exit signal to wait on; the next round re-checks.
            std::thread::yield_now();
        }
        killed
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::collections::HashSet;
    use std::time::Instant;

    pub(super) fn pids() -> Vec<u32> {
        Vec::new()
    }
    pub(super) fn carries(_pid: u32, _marks: &HashSet<Vec<u8>>) -> bool {
        false
    }
    pub(super) fn kill_round(_marks: &HashSet<Vec<u8>>, _deadline: Instant) -> usize {
        0
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::process::new_token;

    /// `setsid -f` detaches like OpenCode's bash tool does: own session, reparented to init.
    fn detached_sleep(token: &str) {
        let status = std::process::Command::new("setsid")
            .args(["-f", "sleep", "600"])
            .env(OWNER_ENV, token)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("setsid runs");
        assert!(status.success());
    }

    #[test]
    fn sweep_kills_detached_carriers_and_only_them() {
        let token = new_token();
        let bystander = new_token();
        detached_sleep(&token);
        detached_sleep(&token);
        detached_sleep(&bystander);
        let deadline = Instant::now() + Duration::from_secs(10);
        while carriers(std::slice::from_ref(&token)).len() < 2 {
            assert!(Instant::now() < deadline, "detached sleeps never appeared");
            std::thread::yield_now();
        }
        assert_eq!(sweep(std::slice::from_ref(&token)), 2);
        assert!(carriers(std::slice::from_ref(&token)).is_empty());
        assert_eq!(carriers(std::slice::from_ref(&bystander)).len(), 1);
        assert_eq!(sweep(std::slice::from_ref(&bystander)), 1);
        assert!(carriers(&[bystander]).is_empty());
    }

    /// The pidfd path itself (the sweep falls back to `kill` without it): open, SIGKILL, and a
    /// wait that ends with the exit, not at the deadline.
    #[test]
    fn a_pidfd_kills_and_sees_the_exit() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .expect("sleep runs");
        let fd = imp::pidfd_open(child.id()).expect("pidfds are available on this kernel");
        assert!(imp::pidfd_kill(&fd));
        let started = Instant::now();
        imp::wait_exit(&fd, started + Duration::from_secs(30));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "waited for the deadline"
        );
        assert_eq!(
            child.wait().unwrap().signal(),
            Some(nix::sys::signal::Signal::SIGKILL as i32)
        );
    }

    #[test]
    fn sweep_of_nothing_kills_nothing() {
        assert_eq!(sweep(&[]), 0);
        assert_eq!(sweep(&[new_token()]), 0);
    }
}
