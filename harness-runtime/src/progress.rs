//! Progress lines on stderr: libtest-mimic prints a result only when a trial ends, and stdout
//! belongs to the libtest protocol (`--list --format terse` must hold only `name: test` lines).

use std::io::Write;
use std::time::Duration;

/// Prints one progress line on stderr. Callers pass redacted text.
pub(crate) fn progress(scenario: &str, message: &str) {
    // One `write_all` per line so lines of parallel trials do not interleave mid-line.
    let line = format!("[live] {scenario}: {message}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// `1.234s`: short, stable, readable.
pub(crate) fn seconds(elapsed: Duration) -> String {
    format!("{:.3}s", elapsed.as_secs_f64())
}
