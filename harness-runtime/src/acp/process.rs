//! An ACP agent's process: spawned like every agent (own process group, owner mark the reaper
//! learned first, cleaned environment, confined through the launcher), with its stdin and stdout
//! left to the protocol and its stderr copied to the root's log and a tail for diagnostics.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::process::{ChildStdin, ChildStdout, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::AcpError;
use crate::opencode::StdioLaunch;
use crate::process::{self, OwnedChild};
use crate::redact::Redactor;
use crate::sandbox::{self, SpawnError};

/// How many stderr lines are kept for diagnostics.
const TAIL_LINES: usize = 200;
/// Between SIGTERM and SIGKILL, before scaling.
const STOP_GRACE: Duration = Duration::from_secs(3);
/// How long the reap may take after SIGKILL.
const STOP_CEILING: Duration = Duration::from_secs(10);

/// A running ACP agent. Dropping it kills the process group synchronously ([`OwnedChild`]).
pub(crate) struct AcpProcess {
    child: tokio::sync::Mutex<Option<OwnedChild>>,
    exit: watch::Receiver<Option<ExitStatus>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    redactor: Arc<Redactor>,
    command: String,
}

/// The protocol's ends of a started agent.
pub(crate) struct Pipes {
    pub(crate) stdin: ChildStdin,
    pub(crate) stdout: ChildStdout,
}

impl AcpProcess {
    /// Starts `launch` in its root's workspace.
    pub(crate) fn spawn(
        launch: &StdioLaunch,
        redactor: Arc<Redactor>,
    ) -> Result<(Self, Pipes), AcpError> {
        let command = redactor.redact(&format!(
            "{} {}",
            launch.program.display(),
            launch.args.join(" ")
        ));
        let spawn_error = |message: String| AcpError::Spawn {
            command: command.clone(),
            message: redactor.redact(&message),
        };
        let stderr_log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(launch.root.stderr_log())
            .map_err(|e| spawn_error(format!("could not open its log: {e}")))?;
        let start = sandbox::Start {
            program: launch.program.clone(),
            args: launch.args.iter().map(OsString::from).collect(),
            current_dir: launch.root.workspace.clone(),
            env: (launch.unset.iter().map(|name| (name.into(), None)))
                .chain((launch.env.iter()).map(|(name, value)| (name.into(), Some(value.into()))))
                .collect(),
            confined: launch.policy.clone(),
            token: process::new_token(),
        };
        let spawned = start.spawn_talking().map_err(|e| match e {
            SpawnError::Reaper(e) => spawn_error(format!("the reaper could not learn it: {e}")),
            e => spawn_error(e.to_string()),
        })?;
        crate::timeline::note(crate::timeline::Lane::Provisioning, "spawn", || {
            command.clone()
        });
        let stderr: Arc<Mutex<VecDeque<String>>> = Arc::default();
        let tail = stderr.clone();
        let (done, _) = watch::channel(false);
        process::spawn_line_pump(
            "live-acp-stderr".into(),
            spawned.stderr,
            stderr_log,
            || {},
            move |line| {
                let mut tail = tail.lock().unwrap_or_else(|p| p.into_inner());
                if tail.len() == TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
            },
            done,
        )
        .map_err(|e| spawn_error(format!("could not start its log thread: {e}")))?;
        let stdin = spawned.stdin.expect("spawned talking: stdin is piped");
        let exit = spawned.child.exit_watch();
        let process = Self {
            child: tokio::sync::Mutex::new(Some(spawned.child)),
            exit,
            stderr,
            redactor,
            command,
        };
        let pipes = Pipes {
            stdin,
            stdout: spawned.stdout,
        };
        Ok((process, pipes))
    }

    /// The last `n` stderr lines, redacted.
    pub(crate) fn stderr_tail(&self, n: usize) -> String {
        let tail = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        let skip = tail.len().saturating_sub(n);
        let lines: Vec<&str> = tail.iter().skip(skip).map(String::as_str).collect();
        self.redactor.redact(&lines.join("\n"))
    }

    /// Turns `Some` when the agent exits.
    pub(crate) fn exit_watch(&self) -> watch::Receiver<Option<ExitStatus>> {
        self.exit.clone()
    }

    /// The redacted command line, for diagnostics.
    pub(crate) fn command(&self) -> &str {
        &self.command
    }

    /// SIGTERM → bounded wait → SIGKILL → reap → sweep of every process with its owner mark.
    /// Does nothing once stopped.
    pub(crate) async fn stop(&self) -> Result<(), AcpError> {
        let Some(mut child) = self.child.lock().await.take() else {
            return Ok(());
        };
        let grace = crate::settings::scaled(STOP_GRACE);
        let report = child
            .stop(grace, crate::settings::scaled(STOP_CEILING))
            .await
            .map_err(|e| AcpError::Stop(self.redactor.redact(&e.to_string())))?;
        crate::timeline::note(crate::timeline::Lane::Teardown, "stopped", || {
            report.to_string()
        });
        Ok(())
    }

    /// The synchronous fallback: SIGKILL, reap, sweep, without any runtime.
    pub(crate) fn kill_blocking(&self) {
        if let Ok(mut child) = self.child.try_lock() {
            drop(child.take()); // OwnedChild's Drop kills the group, reaps and sweeps
        }
    }
}
