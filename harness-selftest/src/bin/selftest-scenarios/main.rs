//! Scenarios with every outcome the runner must report: pass, `Err`, panic, timeout, secrets in
//! failures, unmet requirements and `ignore`. Run by `tests/runner.rs` as a child process.

harness_runtime::main!();

mod outcomes;
mod requirements;
mod skips;
