//! The libtest-mimic runner: one trial per scenario, a tokio runtime and a ceiling each.

use std::process::ExitCode;

/// Runs every registered scenario with the libtest CLI. Returns the libtest exit code.
pub fn run() -> ExitCode {
    let args = libtest_mimic::Arguments::from_args();
    let trials = Vec::new();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Prints one progress line on stderr.
pub(crate) fn progress(scenario: &str, message: &str) {
    eprintln!("[live] {scenario}: {message}");
}
