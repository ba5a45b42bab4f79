//! The per-runner reaper: a helper process that outlives a SIGKILLed runner just long enough to
//! sweep every owner token the runner handed it.
//!
//! The runner holds the write end of the reaper's stdin and writes one token per line. When the
//! runner exits for any reason, the kernel closes that pipe; the reaper reads EOF, sweeps all
//! tokens, and exits. The reaper runs in its own process group (a terminal's Ctrl-C does not reach
//! it), carries no token, and holds none of the runner's output pipes.

use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use super::token::OWNER_ENV;
use crate::settings::{self, Role};

/// The reaper's `main`, reached through `HARNESS_RUNTIME_ROLE=reaper`: reads tokens from stdin
/// until EOF, then sweeps them all.
pub fn run_reaper() -> ExitCode {
    ignore_terminal_signals();
    let mut tokens = Vec::new();
    for line in std::io::stdin().lock().lines() {
        match line {
            Ok(token) if !token.trim().is_empty() => tokens.push(token.trim().to_string()),
            Ok(_) => {}
            Err(_) => break,
        }
    }
    super::sweep(&tokens);
    ExitCode::SUCCESS
}

/// Its own group already keeps terminal signals away; a hang-up of the session must not stop it
/// before the sweep either.
// nix offers no safe way to set a disposition; SIG_IGN runs no handler code.
#[allow(unsafe_code)]
fn ignore_terminal_signals() {
    use nix::sys::signal::{SigHandler, Signal, signal};
    for terminal in [Signal::SIGHUP, Signal::SIGINT] {
        // SAFETY: installing SIG_IGN has no handler code to be unsafe in.
        let _ = unsafe { signal(terminal, SigHandler::SigIgn) };
    }
}

/// A running reaper: the child and the write end of its stdin.
#[derive(Debug)]
pub(crate) struct ReaperHandle {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl ReaperHandle {
    /// Starts `program args…` in the reaper role.
    pub(crate) fn spawn(program: &std::path::Path, args: &[String]) -> std::io::Result<Self> {
        let mut child = Command::new(program)
            .args(args)
            .env(settings::ROLE, Role::Reaper.value())
            .env_remove(OWNER_ENV)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take();
        Ok(Self { child, stdin })
    }

    /// Hands the reaper one more token to sweep at the end.
    pub(crate) fn register(&mut self, token: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("the reaper's pipe is closed"))?;
        stdin.write_all(format!("{token}\n").as_bytes())?;
        stdin.flush()
    }

    /// Whether the reaper process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Closes the pipe (what the runner's death does) and waits up to `ceiling` for the reaper to
    /// finish its sweep. Returns whether it exited (it is killed otherwise).
    pub(crate) fn close_and_wait(mut self, ceiling: Duration) -> bool {
        drop(self.stdin.take());
        let pid = self.child.id();
        let mut child = self.child;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        match rx.recv_timeout(ceiling) {
            Ok(_) => true,
            Err(_) => {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = rx.recv();
                false
            }
        }
    }
}

/// The runner's reaper and the tokens it was given (re-sent if the reaper has to be restarted).
static REAPER: Mutex<Option<(ReaperHandle, Vec<String>)>> = Mutex::new(None);

/// Registers `token` with this runner's reaper, starting the reaper on first use (or again, if it
/// died). Call it before spawning the process that carries the token.
pub(crate) fn register(token: &str) -> std::io::Result<()> {
    if settings::in_helper_role() {
        // We are a helper role ourselves: re-executing would recurse instead of reaping.
        return Err(std::io::Error::other(format!(
            "this process runs in a helper role ({} is set): its main must dispatch roles \
             through harness_runtime::runner::run() or run_role()",
            settings::ROLE
        )));
    }
    let mut guard = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((handle, tokens)) = guard.as_mut() {
        if handle.is_running() && handle.register(token).is_ok() {
            tokens.push(token.to_string());
            return Ok(());
        }
    }
    let tokens = guard.take().map(|(_, tokens)| tokens).unwrap_or_default();
    let (program, args) = super::role_command::get()?;
    let mut handle = ReaperHandle::spawn(&program, &args)?;
    for known in tokens.iter().map(String::as_str).chain([token]) {
        handle.register(known)?;
    }
    let mut tokens = tokens;
    tokens.push(token.to_string());
    *guard = Some((handle, tokens));
    Ok(())
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// What the runner's death looks like to the reaper: EOF on its stdin.
    #[test]
    fn closing_the_pipe_sweeps_every_registered_token() {
        let (program, args) = crate::process::role_command::get().unwrap();
        let mut reaper = ReaperHandle::spawn(&program, &args).unwrap();
        let tokens = [crate::process::new_token(), crate::process::new_token()];
        for token in &tokens {
            reaper.register(token).unwrap();
            let status = Command::new("setsid")
                .args(["-f", "sleep", "600"])
                .env(OWNER_ENV, token)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while crate::process::carriers(&tokens).len() < 2 {
            assert!(
                std::time::Instant::now() < deadline,
                "sleeps never appeared"
            );
            std::thread::yield_now();
        }
        assert!(
            reaper.is_running(),
            "the reaper waits while the pipe is open"
        );
        assert!(
            reaper.close_and_wait(Duration::from_secs(20)),
            "reaper exited"
        );
        assert!(crate::process::carriers(&tokens).is_empty());
    }
}
