//! Every scenario the harness's own tests drive, as a suite written exactly like a user's
//! (`#[live_agent_test]` + `harness_runtime::runner::run()`), run as a child process:
//!
//! - `outcomes`, `requirements`, `skips`, `run_skips`, `cassette`: every outcome the runner must
//!   report (pass, `Err`, panic, timeout, secrets in failures, unmet requirements, `ignore`, skips
//!   decided at run time, a cassette scenario's model plan); driven by `tests/runner/cli.rs`;
//! - `explore`: exploring scenarios of product points only (no agent), one passing, one failing
//!   in one order, for the settings and messages of exploration; driven by `tests/runner/cli.rs`;
//! - `peers`: two scenarios that meet inside one runner process (`needs_peer`), for what nextest
//!   is told of them and how fast they skip where they cannot meet; driven by
//!   `tests/runner/nextest.rs`;
//! - `history`: a scenario that fails when asked (no agent), run after run for the report's
//!   history; driven by `tests/runs/report.rs`;
//! - `snapshot`: writes a snapshot for `tests/runner/snapshots.rs` (requires `SELFTEST_SCRATCH`);
//! - `round_trip`: `cassette` scenarios recorded from a scripted upstream, then replayed without
//!   it; driven by `tests/runs/cassettes`;
//! - `hosted`: `cassette` scenarios recorded from a scripted upstream over HTTPS through each of
//!   OpenCode's provider packages, then replayed without it; driven by `tests/runs/cassettes`;
//! - `rate_limits`: a recording retried after a 429, a live turn through the relay, and
//!   scenarios timing the cap of `LIVE_MODEL_CONCURRENCY`; driven by `tests/runs/rate_limits.rs`;
//! - `budgets`: `cassette` scenarios whose budgets (tokens, cost, first token) their turns
//!   break, and one the run's ceiling keeps from starting; driven by `tests/runs/budgets.rs`;
//! - `verdicts`: `cassette` scenarios with `passes = "K of N"`, one whose verdict passes and one
//!   whose verdict fails against an upstream answering in a known pattern; driven by
//!   `tests/runs/verdicts.rs`;
//! - `hygiene`, `hygiene_probe`, `killed`, `canary`, `shared`, `shared_death`, `shared_beside`:
//!   processes, roots and secrets left by whole runs; driven by `tests/runs/hygiene.rs`;
//! - `reliability`: a hundred mixed fixture scenarios, real-OpenCode ones for the heavy run,
//!   scenarios that meet bad input, and the soak run's 1,051 (named by `build.rs`, skipped
//!   unless `RELIABILITY_SOAK` is set); driven by `tests/reliability`.
//! - `pool`: a scenario holding its lease of a nextest run's pool until it is killed; driven by
//!   `tests/reliability` (`pool`), with `shared`'s `first` and `second`.
//!
//! Everything that starts agents requires `SELFTEST_SCRATCH` (which only a sandboxed run sets),
//! so a plain run of the binary reports it skipped instead of starting servers.

mod budgets;
mod canary;
mod cassette;
mod explore;
mod history;
mod hosted;
mod hygiene;
mod hygiene_probe;
mod killed;
mod outcomes;
mod peers;
mod pool;
mod rate_limits;
mod reliability;
mod requirements;
mod round_trip;
mod run_skips;
mod shared;
mod shared_beside;
mod shared_death;
mod skips;
mod snapshot;
mod verdicts;

fn main() -> std::process::ExitCode {
    // Only acts inside the fixture agent this binary re-executes as (see `reliability::daemon`).
    reliability::daemon::start_if_asked();
    harness_runtime::runner::run()
}
