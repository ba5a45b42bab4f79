//! The scenario binary of `tests/reliability`: a suite written exactly like a user's
//! (`#[live_agent_test]` + `harness_runtime::runner::run()`), with 100 fixture scenarios that mix
//! every outcome and every kind of process a run can leave behind (`mix`), real-OpenCode ones for
//! the heavy run (`real`), and scenarios that meet bad input (`bad_input`).
//!
//! Everything that starts agents requires `RELIABILITY_SCRATCH`, so a plain run of the binary
//! reports it skipped instead of starting servers.

mod bad_input;
mod daemon;
mod mix;
mod real;
mod scratch;

fn main() -> std::process::ExitCode {
    // Only acts inside the fixture agent this binary re-executes as (see `daemon`).
    daemon::start_if_asked();
    harness_runtime::runner::run()
}
