//! One owned child: its own process group, an owner token, a waiter thread, and a bounded stop.

use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::sync::watch;

use super::token::OWNER_ENV;

/// How long `Drop` waits for a SIGKILLed child to be reaped before giving up on it.
const DROP_REAP_CEILING: Duration = Duration::from_secs(10);

/// The exit status, published by the waiter thread to sync and async waiters alike.
#[derive(Debug)]
struct ExitCell {
    status: Mutex<Option<ExitStatus>>,
    changed: Condvar,
    watch: watch::Sender<Option<ExitStatus>>,
}

impl ExitCell {
    fn publish(&self, status: ExitStatus) {
        *self.status.lock().expect("exit cell lock") = Some(status);
        self.changed.notify_all();
        self.watch.send_replace(Some(status));
    }

    fn wait_blocking(&self, ceiling: Duration) -> Option<ExitStatus> {
        let guard = self.status.lock().expect("exit cell lock");
        let (guard, _) = self
            .changed
            .wait_timeout_while(guard, ceiling, |s| s.is_none())
            .expect("exit cell lock");
        *guard
    }
}

/// A spawned child with its output pipes (and its input, when it was asked for).
pub(crate) struct Spawned {
    pub(crate) child: OwnedChild,
    /// `Some` when spawned with [`OwnedChild::spawn_talking`]: an agent that speaks on stdio.
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: ChildStdout,
    pub(crate) stderr: ChildStderr,
}

/// What a stop did.
#[derive(Debug, Clone)]
pub(crate) struct StopReport {
    /// The leader's exit status.
    pub(crate) status: ExitStatus,
    /// Whether SIGTERM was not enough and SIGKILL was needed.
    pub(crate) escalated: bool,
    /// How many token carriers the sweep killed (detached tool commands, grandchildren).
    pub(crate) swept: usize,
}

/// `exit status: 0; swept 2 stray process(es)`, `… after SIGKILL; …`: the timeline's line.
impl std::fmt::Display for StopReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let escalated = if self.escalated { " after SIGKILL" } else { "" };
        write!(
            f,
            "{}{escalated}; swept {} stray process(es)",
            self.status, self.swept
        )
    }
}

/// A stop that could not confirm the child was reaped.
#[derive(Debug, thiserror::Error)]
#[error("the process did not exit within {waited:?} of SIGKILL")]
pub(crate) struct StopError {
    waited: Duration,
}

/// A child process in its own process group, marked with an owner token, reaped by a dedicated
/// thread (so waiting needs no particular tokio runtime: trial runtimes come and go).
#[derive(Debug)]
pub(crate) struct OwnedChild {
    pid: u32,
    token: String,
    exit: Arc<ExitCell>,
    settled: bool,
    /// Whether this child's registration of its token was handed back to the reaper.
    released: bool,
}

impl OwnedChild {
    /// Spawns `command` in a new process group with `OWNER_ENV=token`, stdin null and
    /// stdout/stderr piped. Register the token with the reaper *before* calling this.
    pub(crate) fn spawn(command: Command, token: &str) -> std::io::Result<Spawned> {
        Self::spawn_with_stdin(command, token, Stdio::null())
    }

    /// [`spawn`](Self::spawn) with stdin piped too: for an agent spoken to over stdio (ACP).
    pub(crate) fn spawn_talking(command: Command, token: &str) -> std::io::Result<Spawned> {
        Self::spawn_with_stdin(command, token, Stdio::piped())
    }

    fn spawn_with_stdin(
        mut command: Command,
        token: &str,
        stdin: Stdio,
    ) -> std::io::Result<Spawned> {
        command
            .env(OWNER_ENV, token)
            .process_group(0)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child: Child = command.spawn()?;
        let input = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout was piped");
        let stderr = child.stderr.take().expect("stderr was piped");
        let pid = child.id();
        let (watch, _) = watch::channel(None);
        let exit = Arc::new(ExitCell {
            status: Mutex::new(None),
            changed: Condvar::new(),
            watch,
        });
        let cell = exit.clone();
        let waiter = std::thread::Builder::new()
            .name(format!("live-wait-{pid}"))
            .spawn(move || {
                if let Ok(status) = child.wait() {
                    cell.publish(status);
                }
            });
        let owned = OwnedChild {
            pid,
            token: token.to_string(),
            exit,
            settled: false,
            released: false,
        };
        // Without a waiter thread, `owned` drops here: SIGKILL to the group and the sweep still
        // run; only the reap is not confirmed (the Drop says so).
        waiter?;
        Ok(Spawned {
            child: owned,
            stdin: input,
            stdout,
            stderr,
        })
    }

    /// The leader's pid (also the process group id).
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The owner token every descendant carries.
    #[cfg(test)]
    pub(crate) fn token(&self) -> &str {
        &self.token
    }

    /// The leader's exit status, once reaped.
    pub(crate) fn exit_status(&self) -> Option<ExitStatus> {
        *self.exit.status.lock().expect("exit cell lock")
    }

    /// A receiver that sees the exit status when the leader is reaped.
    pub(crate) fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.watch.subscribe()
    }

    /// Waits for the leader's exit up to `ceiling`.
    pub(crate) async fn wait_exit(&self, ceiling: Duration) -> Option<ExitStatus> {
        let mut rx = self.exit_watch();
        match tokio::time::timeout(ceiling, rx.wait_for(|s| s.is_some())).await {
            Ok(Ok(status)) => *status,
            _ => self.exit_status(),
        }
    }

    fn signal_group(&self, signal: Signal) {
        // ESRCH (the group is gone) is the expected outcome after the leader and members exited.
        let _ = killpg(Pid::from_raw(self.pid as i32), signal);
    }

    /// SIGTERM to the group, up to `grace` for the leader to exit, SIGKILL to the group, up to
    /// `ceiling` for the reap, then the token sweep for everything that left the group.
    pub(crate) async fn stop(
        &mut self,
        grace: Duration,
        ceiling: Duration,
    ) -> Result<StopReport, StopError> {
        let mut escalated = false;
        if self.exit_status().is_none() {
            self.signal_group(Signal::SIGTERM);
        }
        let mut status = self.wait_exit(grace).await;
        // Always SIGKILL the group: members that ignored SIGTERM outlive their leader.
        self.signal_group(Signal::SIGKILL);
        if status.is_none() {
            escalated = true;
            status = self.wait_exit(ceiling).await;
        }
        let token = vec![self.token.clone()];
        let (swept, clean) = tokio::task::spawn_blocking(move || sweep_clean(&token))
            .await
            .unwrap_or_else(|_| sweep_clean(std::slice::from_ref(&self.token)));
        self.release_if(status.is_some() && clean);
        match status {
            Some(status) => {
                self.settled = true;
                Ok(StopReport {
                    status,
                    escalated,
                    swept,
                })
            }
            None => Err(StopError { waited: ceiling }),
        }
    }

    /// The synchronous fallback (`Drop`, no runtime needed): SIGKILL the group, wait for the reap,
    /// sweep the token. Returns whether the leader was confirmed reaped.
    pub(crate) fn kill_blocking(&mut self) -> bool {
        self.signal_group(Signal::SIGKILL);
        let reaped = self
            .exit
            .wait_blocking(crate::settings::scaled(DROP_REAP_CEILING))
            .is_some();
        let (_, clean) = sweep_clean(std::slice::from_ref(&self.token));
        self.release_if(reaped && clean);
        self.settled = reaped;
        reaped
    }

    /// Once the leader is reaped and nothing carries the token, the reaper need not remember
    /// this start of it: a long run would otherwise keep every token it ever made.
    fn release_if(&mut self, ended_clean: bool) {
        if ended_clean && !self.released {
            self.released = true;
            super::reaper::forget(&self.token);
        }
    }
}

/// Sweeps `token`; returns how many carriers it killed and whether none is left.
fn sweep_clean(token: &[String]) -> (usize, bool) {
    let swept = super::sweep(token);
    (swept, super::carriers(token).is_empty())
}

impl Drop for OwnedChild {
    fn drop(&mut self) {
        if !self.settled && !self.kill_blocking() {
            eprintln!("live harness: a child process did not exit after SIGKILL");
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Read;

    fn sh(script: &str) -> Spawned {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        OwnedChild::spawn(command, &crate::process::new_token()).expect("sh spawns")
    }

    /// Reads stdout until `marker`: the script says when its traps are installed.
    fn wait_for(stdout: &mut ChildStdout, marker: &str) {
        let mut seen = String::new();
        let mut buf = [0u8; 64];
        while !seen.contains(marker) {
            let n = stdout.read(&mut buf).expect("read stdout");
            assert!(n > 0, "child closed stdout before {marker:?}: {seen:?}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }

    #[tokio::test]
    async fn stop_terminates_a_cooperative_child() {
        let mut spawned = sh("echo up; exec sleep 600");
        wait_for(&mut spawned.stdout, "up");
        let report = spawned
            .child
            .stop(Duration::from_secs(5), Duration::from_secs(5))
            .await
            .expect("stops");
        assert!(!report.escalated);
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&report.status),
            Some(Signal::SIGTERM as i32)
        );
    }

    #[tokio::test]
    async fn stop_escalates_to_sigkill_and_sweeps_detached_descendants() {
        // Ignores SIGTERM, and leaves a detached grandchild behind like OpenCode's bash tool.
        let mut spawned = sh(
            "trap '' TERM; setsid -f sleep 600 </dev/null >/dev/null 2>&1; echo up; while :; do sleep 1; done",
        );
        wait_for(&mut spawned.stdout, "up");
        let token = vec![spawned.child.token().to_string()];
        assert!(!crate::process::carriers(&token).is_empty());
        let report = spawned
            .child
            .stop(Duration::from_millis(300), Duration::from_secs(5))
            .await
            .expect("stops");
        assert!(report.escalated, "SIGTERM was trapped, SIGKILL was needed");
        assert!(
            report.swept >= 1,
            "the detached sleep was swept: {report:?}"
        );
        assert!(crate::process::carriers(&token).is_empty());
    }

    #[test]
    fn drop_kills_and_reaps_without_a_runtime() {
        let mut spawned = sh("echo up; exec sleep 600");
        wait_for(&mut spawned.stdout, "up");
        let token = vec![spawned.child.token().to_string()];
        let exit = spawned.child.exit.clone();
        drop(spawned.child);
        assert!(exit.status.lock().unwrap().is_some(), "reaped by drop");
        assert!(crate::process::carriers(&token).is_empty());
    }

    /// A stop that ended clean hands its registration back, once; so does a `Drop`.
    #[tokio::test]
    async fn ending_clean_hands_the_token_back_to_the_reaper_once() {
        use crate::process::reaper::{register, registrations};
        let token = crate::process::new_token();
        for _ in 0..3 {
            register(&token).unwrap();
        }
        let spawn = || {
            let mut command = Command::new("sh");
            command.args([
                "-c",
                "setsid -f sleep 600 </dev/null >/dev/null 2>&1; exec sleep 600",
            ]);
            OwnedChild::spawn(command, &token).expect("sh spawns")
        };
        let mut stopped = spawn();
        let ceiling = Duration::from_secs(5);
        stopped.child.stop(ceiling, ceiling).await.expect("stops");
        assert_eq!(registrations(&token), 2);
        stopped
            .child
            .stop(ceiling, ceiling)
            .await
            .expect("stops again");
        assert_eq!(
            registrations(&token),
            2,
            "a second stop handed it back again"
        );
        drop(stopped);
        assert_eq!(
            registrations(&token),
            2,
            "the drop after a stop handed it back"
        );
        drop(spawn());
        assert_eq!(registrations(&token), 1);
        assert!(crate::process::carriers(std::slice::from_ref(&token)).is_empty());
        crate::process::reaper::forget(&token);
    }
}
