//! `runner::run()`: roles first, then the libtest CLI over every registered scenario.

use std::process::ExitCode;

use super::{order, panic, registry, roles, trial, warm};
use crate::{Scenario, settings};

/// Runs every registered scenario with the libtest CLI and returns the libtest exit code.
///
/// A helper role (`HARNESS_RUNTIME_ROLE`) runs instead when set. Configuration errors (a
/// duplicate scenario name, an invalid `LIVE_TIMEOUT_SCALE` or `LIVE_ISOLATION`) are reported before any trial.
/// Never calls `process::exit`, so every guard's destructor runs.
pub fn run() -> ExitCode {
    if let Some(code) = roles::dispatch() {
        return code;
    }
    let args = libtest_mimic::Arguments::from_args();
    if let Err(problem) = settings::timeout_scale().and(settings::isolation()) {
        eprintln!("error: {problem}");
        return ExitCode::from(2);
    }
    let scenarios = Scenario::all();
    if let Err(problem) = registry::check_unique(&scenarios) {
        eprintln!("error: {problem}");
        return ExitCode::from(101);
    }
    panic::install_hook();
    let mode = trial::Mode::from_args(&args);
    warm::prewarm(&scenarios, &args);
    let trials = order::schedule(scenarios, &args)
        .into_iter()
        .map(|scenario| trial::trial(scenario, mode))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    // The runner owns the shared servers (`LIVE_ISOLATION=shared`): none outlives it.
    crate::opencode::shutdown_shared();
    conclusion.exit_code()
}
