//! Reliability at scale, measured: every test prints its figures.
//!
//! - `processes`: process hygiene over a hundred mixed scenarios, also when the runner is
//!   interrupted; `bad_input`: clear errors, never a secret, for bad environment and files;
//! - `ports`: many fixture servers at once; `streams`: hostile event streams with bounded memory;
//!   `redaction`: the redactor fuzzed;
//! - `soak`: 1,050 scenarios in one runner, whose fds, threads and memory must not grow;
//! - `run_checks`: what every whole run is checked for, itself checked on made-up runs;
//! - `pool`: a nextest run's pool of shared servers, across processes killed mid-lease.
//!
//! `cargo test --release -p harness-selftest --test reliability` runs the fast part (CI runs it in
//! debug, with `cargo test --workspace`); `-- --include-ignored` adds the heavy part (real
//! OpenCode, larger scales), which CI runs alone in release (`-- --ignored`).

mod bad_input;
mod io_support;
mod pool;
mod ports;
mod processes;
mod redaction;
mod run_checks;
mod soak;
mod soak_samples;
mod streams;

/// The scenario binary: its `reliability::` scenarios, and helper roles (fixture agent, reaper).
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// A suite with two scenarios of one name.
const DUPLICATES: &str = env!("CARGO_BIN_EXE_selftest-duplicates");

fn main() -> std::process::ExitCode {
    harness_selftest::prerequisites::run(
        [
            bad_input::tests(),
            ports::tests(),
            pool::tests(),
            processes::tests(),
            redaction::tests(),
            run_checks::tests(),
            soak::tests(),
            soak_samples::tests(),
            streams::tests(),
        ]
        .into_iter()
        .flatten(),
    )
}
