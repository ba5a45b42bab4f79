//! The one way the harness starts an agent server or a product: its own process group, an owner
//! mark the reaper learned first, an environment cleaned of what agents must not see, and,
//! confined, this binary in the launcher role carrying the program and its policy.
//!
//! Here rather than in `process/`: the confined path needs the launcher, and `process/` sits
//! above the sandbox.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use super::{Launch, Policy, SandboxError};
use crate::process::{self, OwnedChild, Spawned};

/// One start of a program as an owned child.
#[derive(Debug)]
pub(crate) struct Start {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) current_dir: PathBuf,
    /// Applied in order after the variables agents must not see were removed: `Some` sets, `None`
    /// removes (later entries win).
    pub(crate) env: Vec<(OsString, Option<OsString>)>,
    /// The sandbox it is confined to through the launcher; `None`: unconfined.
    pub(crate) confined: Option<Policy>,
    /// The owner mark it and all its descendants carry.
    pub(crate) token: String,
}

/// Why a start failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SpawnError {
    #[error("could not find the sandbox launcher: {0}")]
    NoLauncher(std::io::Error),
    #[error("the argument {0:?} is not UTF-8, which the sandbox launcher cannot carry")]
    NotUnicode(OsString),
    #[error("{0}")]
    HandOver(SandboxError),
    /// The reaper could not learn the owner mark: nothing was started.
    #[error("{0}")]
    Reaper(std::io::Error),
    #[error("{0}")]
    Spawn(std::io::Error),
}

impl Start {
    /// Starts it: the reaper learns the owner mark before the spawn, so a runner that dies right
    /// after it leaves nothing behind.
    pub(crate) fn spawn(self) -> Result<Spawned, SpawnError> {
        self.spawn_as(OwnedChild::spawn)
    }

    /// [`spawn`](Self::spawn) with stdin piped: an agent spoken to over stdio (ACP).
    pub(crate) fn spawn_talking(self) -> Result<Spawned, SpawnError> {
        self.spawn_as(OwnedChild::spawn_talking)
    }

    fn spawn_as(
        self,
        spawn: fn(Command, &str) -> std::io::Result<Spawned>,
    ) -> Result<Spawned, SpawnError> {
        let mut command = match &self.confined {
            // The launcher becomes the program by `exec` (same pid, group and owner mark) once it
            // confined itself.
            Some(_) => Launch::launcher_command().map_err(SpawnError::NoLauncher)?,
            None => {
                let mut command = Command::new(&self.program);
                command.args(&self.args);
                command
            }
        };
        command.current_dir(&self.current_dir);
        for name in crate::settings::not_for_agents() {
            command.env_remove(name);
        }
        for (name, value) in &self.env {
            match value {
                Some(value) => command.env(name, value),
                None => command.env_remove(name),
            };
        }
        if let Some(policy) = self.confined {
            let args = self
                .args
                .into_iter()
                .map(|arg| arg.into_string().map_err(SpawnError::NotUnicode))
                .collect::<Result<Vec<_>, _>>()?;
            let launch = Launch {
                program: self.program,
                args,
                role: None,
                policy,
            };
            launch
                .hand_over(&mut command)
                .map_err(SpawnError::HandOver)?;
        }
        process::register_token(&self.token).map_err(SpawnError::Reaper)?;
        spawn(command, &self.token).map_err(SpawnError::Spawn)
    }
}
