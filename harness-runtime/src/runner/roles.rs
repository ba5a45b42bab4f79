//! The runner's binary re-executes itself for helper processes; the role comes from the
//! environment.

use std::process::ExitCode;

use crate::settings::{self, Role};

/// The variable that puts a re-executed binary in a helper role (the fixture agent, the reaper).
/// The harness sets it on the helpers it starts; nothing else should, and a process that starts
/// other programs should not pass it on.
pub const ROLE_ENV: &str = settings::ROLE;

/// Runs the helper role this process was started in, and returns its exit code; `None` when
/// `HARNESS_RUNTIME_ROLE` is unset, i.e. this process is not a helper.
///
/// [`run`](super::run) calls it first. A binary with a `main` of its own that provisions agents
/// (a benchmark, a tool) must call it first too: the harness starts its reaper and the fixture
/// agent by re-executing the current binary in a role.
pub fn run_role() -> Option<ExitCode> {
    match settings::role() {
        Ok(None) => None,
        Ok(Some(Role::FixtureAgent)) => Some(crate::fixture::run_agent()),
        Ok(Some(Role::Reaper)) => Some(crate::process::run_reaper()),
        Err(invalid) => {
            eprintln!("error: {invalid}");
            Some(ExitCode::from(2))
        }
    }
}
