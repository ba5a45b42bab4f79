//! The scenario binary (`selftest-scenarios`) run as a child, the way `cargo test` and nextest
//! run it, in one test binary (one link of the runtime): `cli` (the command line, outcomes, exit
//! codes, output), `nextest` (what a run under nextest's variables says), `snapshots` (a
//! scenario's snapshot belongs to its crate). Each module's tests keep their module's name
//! (`cargo test -p harness-selftest --test runner -- nextest::`).

mod cli;
mod nextest;
mod snapshots;
