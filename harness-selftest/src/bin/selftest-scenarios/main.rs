//! Scenarios with every outcome the runner must report: pass, `Err`, panic, timeout, secrets in
//! failures, unmet requirements and `ignore`. Run by `tests/runner.rs` as a child process.
//!
//! The hygiene modules (`hygiene`, `hygiene_probe`, `killed`, `canary`, `run_skips`, `shared`) start
//! agents and are driven by `tests/hygiene.rs`; those that start agents require
//! `SELFTEST_SCRATCH`, so a plain run reports them skipped. `snapshot` writes a snapshot for
//! `tests/snapshots.rs` and requires `SELFTEST_SCRATCH` too.

harness_runtime::main!();

mod canary;
mod hygiene;
mod hygiene_probe;
mod killed;
mod outcomes;
mod requirements;
mod run_skips;
mod scratch;
mod shared;
mod skips;
mod snapshot;
