//! The fixture agent as a standalone executable (a fake `opencode` with fault injection).

#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    harness_runtime::__private::run_agent()
}
