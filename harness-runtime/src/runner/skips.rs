//! A scenario that skips at run time under nextest. nextest judges a test process by its exit
//! status alone and has no status for a test that ran and skipped: exit 0 is a pass. So the
//! runner says it where nextest keeps the test's output, `LIVE SKIPPED <scenario>: <reason>` on
//! stderr, the run report records it as skipped, a process that skipped or failed ends with the
//! run's skips so far, and `LIVE_NEXTEST_SKIP=fail` makes such a skip a failure instead.
//! Under `cargo test` nothing changes: libtest reports the skip as `ignored` with its reason.

use std::io::Write;
use std::sync::Mutex;

use libtest_mimic::{Completion, Failed};

use crate::settings;

/// What this process's trials ended as, for its closing line.
static ENDED: Mutex<Ended> = Mutex::new(Ended {
    skipped: Vec::new(),
    failed: false,
});

struct Ended {
    /// The scenarios of this process that skipped at run time.
    skipped: Vec<String>,
    failed: bool,
}

/// The line nextest's captured output carries for a run-time skip.
pub(crate) fn skipped_line(name: &str, reason: &str) -> String {
    format!("LIVE SKIPPED {name}: {reason}")
}

/// A trial's result as nextest should see it. `declared_ignored`: an `ignore = "…"` scenario not
/// asked for, which nextest already lists as ignored; not a run-time skip.
pub(super) fn settle(
    name: &str,
    result: Result<Completion, Failed>,
    declared_ignored: bool,
) -> Result<Completion, Failed> {
    if !settings::nextest_process_per_test() {
        return result;
    }
    let reason = match &result {
        Ok(Completion::Ignored { reason }) if !declared_ignored => reason
            .clone()
            .unwrap_or_else(|| "no reason given".to_owned()),
        Err(_) => {
            ENDED.lock().unwrap_or_else(|e| e.into_inner()).failed = true;
            return result;
        }
        _ => return result,
    };
    let line = format!("{}\n", skipped_line(name, &reason));
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    let mut ended = ENDED.lock().unwrap_or_else(|e| e.into_inner());
    if settings::nextest_skip_fails() {
        ended.failed = true;
        return Err(Failed::from(failure_message(&reason)));
    }
    ended.skipped.push(name.to_owned());
    result
}

/// The failure a run-time skip becomes under `LIVE_NEXTEST_SKIP=fail`.
fn failure_message(reason: &str) -> String {
    format!(
        "skipped at run time: {reason} ({}=fail makes a run-time skip a failure under nextest, \
         which would count it as passed)",
        settings::NEXTEST_SKIP
    )
}

/// The closing line of a nextest process whose scenario skipped or failed, when the run has
/// run-time skips: how many so far and which. `run_skips` are the run's skipped scenarios as
/// the run report holds them (every process of the run adds to it), `None` when it is off.
pub(crate) fn summary(run_skips: Option<Vec<String>>) -> Option<String> {
    if !settings::nextest_process_per_test() {
        return None;
    }
    let ended = ENDED.lock().unwrap_or_else(|e| e.into_inner());
    if ended.skipped.is_empty() && !ended.failed {
        return None;
    }
    let mut names = run_skips.unwrap_or_default();
    for own in &ended.skipped {
        if !names.contains(own) {
            names.push(own.clone());
        }
    }
    summary_line(&names)
}

/// `LIVE SKIPPED so far in this nextest run: 2 (nextest counts them as passed): a, b`.
fn summary_line(names: &[String]) -> Option<String> {
    if names.is_empty() {
        return None;
    }
    Some(format!(
        "LIVE SKIPPED so far in this nextest run: {} (nextest counts {} as passed; the run \
         report gives each reason): {}",
        names.len(),
        if names.len() == 1 { "it" } else { "them" },
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_name_the_scenarios_and_the_reason() {
        assert_eq!(
            skipped_line("probes::tool_call", "the model did not call the bash tool"),
            "LIVE SKIPPED probes::tool_call: the model did not call the bash tool"
        );
        assert_eq!(summary_line(&[]), None);
        assert_eq!(
            summary_line(&["probes::a".into(), "probes::b".into()]).unwrap(),
            "LIVE SKIPPED so far in this nextest run: 2 (nextest counts them as passed; the run \
             report gives each reason): probes::a, probes::b"
        );
        assert!(
            failure_message("no peer")
                .starts_with("skipped at run time: no peer (LIVE_NEXTEST_SKIP=fail")
        );
    }
}
