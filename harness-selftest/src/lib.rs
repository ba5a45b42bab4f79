//! What the harness's own tests share: running a scenario binary in a sandbox and watching what
//! it leaves (`sandbox`, `run`, `procs`) and the run report it wrote (`report`), the scratch dir
//! its scenarios record pids in (`scratch`), the harness of the test binaries that run, skip or
//! fail a test by what the machine has (`prerequisites`, used by harness-runtime's tests too),
//! the cases of the cassette round trip, which its scenarios and its test share (`round_trip`),
//! and the scripted upstream the tests with real OpenCode and no real model run in their own
//! process (`upstream`).

pub mod budgets;
pub mod files;
pub mod hosted;
pub mod prerequisites;
pub mod probe_model;
pub mod procs;
pub mod rate_limits;
pub mod report;
pub mod round_trip;
pub mod run;
pub mod sandbox;
pub mod scratch;
pub mod tls_front;
pub mod upstream;
pub mod verdicts;
