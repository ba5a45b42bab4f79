//! The test binary re-executes itself for helper processes; the role comes from the environment.

use std::process::ExitCode;

/// The variable that selects a helper role.
pub(crate) const ROLE: &str = "HARNESS_RUNTIME_ROLE";

/// Runs the requested role, or `None` when this process is the runner itself.
pub(crate) fn dispatch() -> Option<ExitCode> {
    let role = std::env::var_os(ROLE)?;
    Some(match role.to_str() {
        Some("fixture-agent") => crate::fixture::run_agent(),
        Some("reaper") => crate::process::run_reaper(),
        Some(other) => {
            eprintln!(
                "error: unknown {ROLE}={other:?}: expected \"fixture-agent\" or \"reaper\"; \
                 unset it to run the scenarios"
            );
            ExitCode::from(2)
        }
        None => {
            eprintln!("error: {ROLE} is not valid UTF-8; unset it to run the scenarios");
            ExitCode::from(2)
        }
    })
}
