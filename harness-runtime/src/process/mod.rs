//! Owned child processes: own process group, die with the runner, terminate → kill → reap.

/// The reaper's `main`, reached through `HARNESS_RUNTIME_ROLE=reaper`.
pub fn run_reaper() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
