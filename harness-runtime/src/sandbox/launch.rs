//! What the runner hands the sandbox launcher: the program to run, its arguments and role, and
//! the policy to confine it to. It travels in the launcher's environment, which the launcher
//! removes before it runs the program.

use std::path::PathBuf;
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::{Policy, SandboxError};
use crate::settings::{self, Role};

/// One confined launch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Launch {
    /// The agent's program (`opencode`, the fixture agent).
    pub(crate) program: PathBuf,
    /// Its arguments.
    pub(crate) args: Vec<String>,
    /// The helper role it runs in (the fixture agent's), set in place of the launcher's own.
    pub(crate) role: Option<String>,
    /// What it may touch.
    pub(crate) policy: Policy,
}

impl Launch {
    /// The launcher's command: this binary re-executed in the sandbox role (as the reaper is),
    /// carrying this launch. The caller adds the working directory and the program's
    /// environment; [`Launch::hand_over`] then goes last.
    pub(crate) fn launcher_command() -> std::io::Result<Command> {
        let (program, args) = crate::process::role_command()?;
        let mut command = Command::new(program);
        command.args(args);
        Ok(command)
    }

    /// Puts the launcher role and this launch into `command`'s environment, over whatever role
    /// it held (which becomes [`role`](Self::role) if it had none).
    pub(crate) fn hand_over(mut self, command: &mut Command) -> Result<(), SandboxError> {
        if self.role.is_none() {
            self.role = command
                .get_envs()
                .find(|(name, _)| *name == settings::ROLE)
                .and_then(|(_, value)| value?.to_str().map(str::to_string));
        }
        let text = serde_json::to_string(&self).map_err(|e| SandboxError::Launch {
            var: settings::SANDBOX_LAUNCH,
            problem: e.to_string(),
        })?;
        command
            .env(settings::ROLE, Role::SandboxLauncher.value())
            .env(settings::SANDBOX_LAUNCH, text);
        Ok(())
    }

    /// The launch this process was started with (the launcher's side).
    pub(crate) fn from_env() -> Result<Self, SandboxError> {
        let problem = |problem: String| SandboxError::Launch {
            var: settings::SANDBOX_LAUNCH,
            problem,
        };
        let text = settings::sandbox_launch()
            .map_err(|invalid| problem(invalid.to_string()))?
            .ok_or_else(|| problem("it is not set".into()))?;
        serde_json::from_str(&text).map_err(|e| problem(e.to_string()))
    }

    /// The program's command: its arguments, then those a wrapper passed on (see
    /// [`wrapped_args`]), its role (or none), without the launch or the passed arguments.
    pub(crate) fn program_command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command
            .args(&self.args)
            .env_remove(settings::SANDBOX_LAUNCH);
        for (name, value) in wrapped_args() {
            command.arg(value).env_remove(name);
        }
        match &self.role {
            Some(role) => command.env(settings::ROLE, role),
            None => command.env_remove(settings::ROLE),
        };
        command
    }
}

/// The arguments a wrapper script passed on in `LIVE_SANDBOX_ARG_0`, `_1`, … (up to the first
/// one missing), with their variables' names. A shared workspace's shell is such a wrapper:
/// OpenCode runs it as `<wrapper> -c <command>`, and its arguments cannot travel on the command
/// line, since a test binary under libtest (the launcher's other shape) would parse them.
fn wrapped_args() -> Vec<(String, std::ffi::OsString)> {
    (0..)
        .map(|n| format!("{}{n}", settings::SANDBOX_ARG))
        .map_while(|name| settings::raw(&name).map(|value| (name, value)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch() -> Launch {
        Launch {
            program: PathBuf::from("/bin/agent"),
            args: vec!["serve".into()],
            role: None,
            policy: Policy::system(),
        }
    }

    fn env(command: &Command, name: &str) -> Option<Option<String>> {
        command
            .get_envs()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()))
    }

    /// The fixture agent's role moves into the launch; the launcher's role replaces it.
    #[test]
    fn the_program_role_travels_inside_the_launch() {
        let mut command = Command::new("launcher");
        command.env(settings::ROLE, "fixture-agent");
        launch().hand_over(&mut command).unwrap();
        assert_eq!(env(&command, settings::ROLE), Some(Some("sandbox".into())));
        let text = env(&command, settings::SANDBOX_LAUNCH).unwrap().unwrap();
        let carried: Launch = serde_json::from_str(&text).unwrap();
        assert_eq!(carried.role.as_deref(), Some("fixture-agent"));
        let program = carried.program_command();
        assert_eq!(program.get_program(), "/bin/agent");
        assert_eq!(
            env(&program, settings::ROLE),
            Some(Some("fixture-agent".into()))
        );
        assert_eq!(env(&program, settings::SANDBOX_LAUNCH), Some(None));
    }

    /// OpenCode gets no role at all: the launcher's is removed.
    #[test]
    fn a_program_without_a_role_gets_none() {
        let mut command = Command::new("launcher");
        launch().hand_over(&mut command).unwrap();
        let text = env(&command, settings::SANDBOX_LAUNCH).unwrap().unwrap();
        let carried: Launch = serde_json::from_str(&text).unwrap();
        assert_eq!(carried, launch());
        assert_eq!(env(&carried.program_command(), settings::ROLE), Some(None));
    }
}
