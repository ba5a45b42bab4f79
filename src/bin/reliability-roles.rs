//! The helper processes of the `reliability` test target: the reaper when
//! `HARNESS_RUNTIME_ROLE=reaper`, otherwise the fixture agent (`serve --hostname … --port …`).
//! A test binary under libtest's own harness cannot re-execute itself in these roles.

fn main() -> std::process::ExitCode {
    if std::env::var_os("HARNESS_RUNTIME_ROLE").is_some_and(|role| role == "reaper") {
        harness_runtime::process::run_reaper()
    } else {
        harness_runtime::fixture::run_agent()
    }
}
