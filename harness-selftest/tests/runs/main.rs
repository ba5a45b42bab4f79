//! Whole runs of the scenario binaries (`selftest-scenarios`) as child processes, in one test
//! binary whose `main` runs every module's tests (one link of the runtime, and one pool of test
//! threads across them, instead of one binary each): `hygiene` (processes, roots and secrets
//! after whole runs), `partitions` (nextest sharding), `report` (the run report, its page in
//! Chromium, the history), and those against a scripted upstream this process runs: `cassettes`
//! (the round trip), `verdicts` (`passes = "K of N"`), `rate_limits`, `budgets`.
//!
//! They need something `cargo test` does not build (real OpenCode, cargo-nextest, Chromium), and
//! libtest's own harness cannot skip at run time: each is run, skipped with the reason, or failed
//! under CI (`harness_selftest::prerequisites`). Each module's tests keep their module's name
//! (`cargo test -p harness-selftest --test runs -- hygiene::`).

use std::process::ExitCode;

use harness_selftest::prerequisites;

mod budgets;
mod cassettes;
mod hygiene;
mod partitions;
mod rate_limits;
mod report;
mod verdicts;

fn main() -> ExitCode {
    let code = prerequisites::run(
        budgets::tests()
            .into_iter()
            .chain(cassettes::tests())
            .chain(hygiene::tests())
            .chain(partitions::tests())
            .chain(rate_limits::tests())
            .chain(report::tests())
            .chain(verdicts::tests()),
    );
    report::after();
    code
}
