//! The runner's binary re-executes itself for helper processes; the role comes from the
//! environment.

use std::process::ExitCode;

use crate::settings::{self, Role};

/// Runs the helper role this process was started in, and returns its exit code; `None` when
/// `HARNESS_RUNTIME_ROLE` is unset, i.e. this process is not a helper.
///
/// [`run`](super::run) calls it first. A binary with a `main` of its own that provisions agents
/// (a benchmark, a tool) must call it first too: the harness starts its reaper, the sandbox
/// launcher and the fixture agent by re-executing the current binary in a role.
pub fn run_role() -> Option<ExitCode> {
    match settings::role() {
        Ok(None) => None,
        Ok(Some(Role::FixtureAgent)) => Some(crate::fixture::run_agent()),
        Ok(Some(Role::Reaper)) => Some(crate::process::run_reaper()),
        Ok(Some(Role::SandboxLauncher)) => Some(crate::sandbox::run_launcher()),
        Ok(Some(Role::Pool)) => Some(crate::opencode::run_pool_owner()),
        Ok(Some(Role::AcpForward)) => Some(crate::acp::run_forward()),
        Err(invalid) => {
            eprintln!("error: {invalid}");
            Some(ExitCode::from(2))
        }
    }
}

#[cfg(test)]
mod tests {
    /// The helper roles of this unit-test binary, whose `main` is libtest's: the reaper and the
    /// sandbox launcher re-execute it with this test selected (`process::role_command`).
    #[test]
    #[ignore = "entry point of the helper roles, run by the tests that start helpers"]
    fn helper_role() {
        if crate::settings::in_helper_role() {
            // The launcher returns only when it could not run its program, having said why.
            let _ = super::run_role();
        }
    }
}
