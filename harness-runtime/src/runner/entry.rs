//! `runner::run()`: roles first, then the libtest CLI over every registered scenario.

use std::process::ExitCode;
use std::sync::Arc;

use super::descriptor::Scenario;
use super::{cli, order, panic, peers, registry, report_hook, roles, skips, trial, warm};
use crate::settings;

/// Runs every registered scenario with the libtest CLI and returns the libtest exit code.
///
/// Any number of filters select, as libtest's do: a scenario runs when its name contains any of
/// them (is one of them, with `--exact`) and matches no `--skip`. An unknown flag exits 2.
///
/// A helper role (`HARNESS_RUNTIME_ROLE`, see [`run_role`](super::run_role)) runs instead when
/// set. Configuration errors (a duplicate scenario name, any invalid setting of the README's
/// environment table) are reported before any trial. Never calls `process::exit`, so every
/// guard's destructor runs.
pub fn run() -> ExitCode {
    if let Some(code) = roles::run_role() {
        return code;
    }
    let cli = match cli::parse(std::env::args_os()) {
        Ok(cli) => cli,
        Err(usage) => {
            // `--help`, or a usage error: clap's text and exit code (2), as libtest-mimic's.
            let _ = usage.print();
            return ExitCode::from(u8::try_from(usage.exit_code()).unwrap_or(2));
        }
    };
    if let Err(problems) = settings::check_all(crate::explore::Schedule::parse) {
        for problem in problems {
            eprintln!("error: {problem}");
        }
        return ExitCode::from(2);
    }
    let scenarios = Scenario::all();
    if let Err(problem) = registry::check_unique(&scenarios) {
        eprintln!("error: {problem}");
        return ExitCode::from(101);
    }
    if let Err(problem) = peers::check(&scenarios) {
        eprintln!("error: {problem}");
        return ExitCode::from(101);
    }
    peers::decide(&scenarios, &cli);
    panic::install_hook();
    let mode = trial::Mode::from_args(cli.args());
    // The run's shared servers (`LIVE_ISOLATION=shared`): the runner owns them, none outlives it.
    let pool = Arc::new(crate::opencode::SharedPool::default());
    warm::prewarm(&pool, &scenarios, &cli);
    let names: Vec<String> = scenarios.iter().map(|s| s.name()).collect();
    let args = cli.for_libtest(names.iter().map(String::as_str));
    let trials = order::schedule(scenarios, cli.args())
        .into_iter()
        .map(|scenario| trial::trial(scenario, mode, pool.clone()))
        .collect();
    let conclusion = libtest_mimic::run(&args, trials);
    shut_down(&pool);
    // Which live-model scenarios the run's ceiling kept from running, if any.
    if let Some(line) = crate::budget::run_summary() {
        eprintln!("{line}");
    }
    // Under nextest, which counts a run-time skip as a pass: the run's skips so far.
    if let Some(line) = skips::summary(report_hook::run_skips()) {
        eprintln!("{line}");
    }
    // Last, so its line is the runner's last: where the run report is.
    report_hook::conclude();
    conclusion.exit_code()
}

/// Stops the run's shared servers after the last trial, on a runtime of its own (every trial's
/// ended with it); without one, the pool's drop kills them.
fn shut_down(pool: &crate::opencode::SharedPool) {
    if let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        runtime.block_on(pool.shutdown());
    }
}
