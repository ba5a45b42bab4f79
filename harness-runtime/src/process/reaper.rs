//! The per-runner reaper: a helper process that outlives a SIGKILLed runner just long enough to
//! sweep every owner token the runner handed it.
//!
//! The runner holds the write end of the reaper's stdin and writes one token per line. When the
//! runner exits for any reason, the kernel closes that pipe; the reaper reads EOF, sweeps all
//! tokens, and exits. The reaper runs in its own process group (a terminal's Ctrl-C does not reach
//! it), carries no token, and holds none of the runner's output pipes.
//!
//! A token whose processes all ended (stopped, swept, nothing left carrying it) is forgotten
//! (`forget <token>`): both sides hold only the tokens of what may still run, so a long run does
//! not grow with every agent it ever started.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, ExitCode, Stdio};
use std::sync::Mutex;

use super::token::OWNER_ENV;
use crate::settings::{self, Role};

/// The reaper's `main`, reached through `HARNESS_RUNTIME_ROLE=reaper`: reads tokens from stdin
/// until EOF, then sweeps them all.
pub fn run_reaper() -> ExitCode {
    ignore_terminal_signals();
    let mut tokens = HashSet::new();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        match line.strip_prefix(FORGET) {
            Some(token) => {
                tokens.remove(token.trim());
            }
            None if !line.is_empty() => {
                tokens.insert(line.to_string());
            }
            None => {}
        }
    }
    // A pool's owner also hands its directory (`clean-dir <path>`): cleaned once its processes
    // are gone.
    let (dirs, tokens): (Vec<_>, Vec<_>) = tokens
        .into_iter()
        .partition(|line| line.starts_with(super::run_dir::CLEAN_DIR));
    super::sweep(&tokens);
    for dir in dirs {
        super::run_dir::clean_after_owner(std::path::Path::new(
            &dir[super::run_dir::CLEAN_DIR.len()..],
        ));
    }
    ExitCode::SUCCESS
}

/// The line prefix that takes a token back (tokens hold no spaces).
const FORGET: &str = "forget ";

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

    /// Takes `token` back: nothing carrying it is left to sweep.
    pub(crate) fn forget(&mut self, token: &str) -> std::io::Result<()> {
        self.register(&format!("{FORGET}{token}"))
    }

    /// Whether the reaper process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    #[cfg(any(test, feature = "testing"))]
    /// Closes the pipe (what the runner's death does) and waits up to `ceiling` for the reaper to
    /// finish its sweep. Returns whether it exited (it is killed otherwise).
    pub(crate) fn close_and_wait(mut self, ceiling: std::time::Duration) -> bool {
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

/// The runner's reaper and the tokens it was given, each with how many processes were started
/// under it and not yet ended clean (re-sent if the reaper has to be restarted).
static REAPER: Mutex<Option<(ReaperHandle, HashMap<String, usize>)>> = Mutex::new(None);

/// Registers `token` with this runner's reaper, starting the reaper on first use (or again, if it
/// died). Call it before spawning the process that carries the token.
pub(crate) fn register(token: &str) -> std::io::Result<()> {
    // The pool's owner starts servers of its own, each registered with a reaper of its own.
    if settings::in_helper_role() && !matches!(settings::role(), Ok(Some(Role::Pool))) {
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
            *tokens.entry(token.to_string()).or_default() += 1;
            return Ok(());
        }
    }
    let mut tokens = guard.take().map(|(_, tokens)| tokens).unwrap_or_default();
    let (program, args) = super::role_command::get()?;
    let mut handle = ReaperHandle::spawn(&program, &args)?;
    for known in tokens.keys().map(String::as_str).chain([token]) {
        handle.register(known)?;
    }
    *tokens.entry(token.to_string()).or_default() += 1;
    *guard = Some((handle, tokens));
    Ok(())
}

/// Ends one registration of `token`: a process started under it ended and nothing carrying the
/// token is left. The last one takes the token back from the reaper.
pub(crate) fn forget(token: &str) {
    let mut guard = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    let Some((handle, tokens)) = guard.as_mut() else {
        return;
    };
    let Some(count) = tokens.get_mut(token) else {
        return;
    };
    *count -= 1;
    if *count == 0 {
        tokens.remove(token);
        // A reaper that cannot hear it has died: the next registration starts one that is
        // handed only the tokens still held.
        let _ = handle.forget(token);
    }
}

/// How many registrations of `token` are held.
#[cfg(test)]
pub(super) fn registrations(token: &str) -> usize {
    let guard = REAPER.lock().unwrap_or_else(|p| p.into_inner());
    guard
        .as_ref()
        .and_then(|(_, tokens)| tokens.get(token).copied())
        .unwrap_or(0)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A detached `sleep 600` carrying `token`, as a tool's daemon would.
    fn detached_sleep(token: &str) {
        let status = Command::new("setsid")
            .args(["-f", "sleep", "600"])
            .env(OWNER_ENV, token)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits until `n` processes carry one of `tokens`.
    fn wait_for_carriers(tokens: &[String], n: usize) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while crate::process::carriers(tokens).len() < n {
            assert!(
                std::time::Instant::now() < deadline,
                "sleeps never appeared"
            );
            std::thread::yield_now();
        }
    }

    /// What the runner's death looks like to the reaper: EOF on its stdin.
    #[test]
    fn closing_the_pipe_sweeps_every_registered_token() {
        let (program, args) = crate::process::role_command::get().unwrap();
        let mut reaper = ReaperHandle::spawn(&program, &args).unwrap();
        let tokens = [crate::process::new_token(), crate::process::new_token()];
        for token in &tokens {
            reaper.register(token).unwrap();
            detached_sleep(token);
        }
        wait_for_carriers(&tokens, 2);
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

    /// A forgotten token is no longer the reaper's: its carrier survives the sweep (a process
    /// carrying it after `forget` is not the harness's promise any more), the others do not.
    #[test]
    fn a_forgotten_token_is_not_swept_and_the_others_are() {
        let (program, args) = crate::process::role_command::get().unwrap();
        let mut reaper = ReaperHandle::spawn(&program, &args).unwrap();
        let (kept, forgotten) = (crate::process::new_token(), crate::process::new_token());
        for token in [&kept, &forgotten] {
            reaper.register(token).unwrap();
            detached_sleep(token);
        }
        wait_for_carriers(&[kept.clone(), forgotten.clone()], 2);
        reaper.forget(&forgotten).unwrap();
        assert!(
            reaper.close_and_wait(Duration::from_secs(20)),
            "reaper exited"
        );
        let left = crate::process::carriers(std::slice::from_ref(&forgotten)).len();
        crate::process::sweep(std::slice::from_ref(&forgotten));
        assert!(crate::process::carriers(std::slice::from_ref(&kept)).is_empty());
        assert_eq!(left, 1, "the forgotten token's sleep was swept");
    }

    /// A token registered twice (a restart under the same mark) is held until both ended.
    #[test]
    fn the_last_forget_of_a_token_takes_it_back() {
        let token = crate::process::new_token();
        register(&token).unwrap();
        register(&token).unwrap();
        assert_eq!(registrations(&token), 2);
        forget(&token);
        assert_eq!(registrations(&token), 1);
        forget(&token);
        assert_eq!(registrations(&token), 0);
        forget(&token);
        assert_eq!(registrations(&token), 0);
    }
}
