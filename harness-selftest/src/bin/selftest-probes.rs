//! The root live suite's real-model probes (`tests/live/probes.rs`), compiled as they are into a
//! runner of their own: the hosted-provider proof (`tests/runs/cassettes/probes.rs`) records and
//! replays exactly those scenarios through OpenCode's built-in `anthropic` provider over HTTPS.
//! They live apart from `selftest-scenarios` because they start agents without requiring
//! `SELFTEST_SCRATCH` (the root suite runs them as they are); only that test runs this binary.

harness_runtime::main!();

#[path = "../../../tests/live/probes.rs"]
mod probes;
