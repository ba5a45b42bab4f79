//! Reading `cargo nextest run`'s human output (`--color never --status-level all`): which
//! scenario of the `live` binary ended how, in libtest.rs's words (`ok`, `FAILED`, `ignored`),
//! and whether a nextest run ended the scenarios as a `cargo test` run did.
//!
//! Std only: `tests/bench_output.rs` includes this file.

use std::collections::BTreeMap;

/// The name of the test binary whose scenarios are read (`<package>::live` in nextest's ids).
const BINARY: &str = "live";

/// Every final status line of a `live` scenario (`PASS [   1.234s] (3/64) pkg::live turns::a`):
/// name → `ok`, `FAILED` or `ignored`. Test output, indented beneath a failure, never has the
/// shape of a status line of the `live` binary; `SLOW`, `START` and other interim lines are
/// left out.
pub fn outcomes(output: &str) -> BTreeMap<String, String> {
    output.lines().filter_map(status_line).collect()
}

fn status_line(line: &str) -> Option<(String, String)> {
    let (status, rest) = line.trim().split_once(" [")?;
    // A retry's final attempt reads `TRY 2 PASS [ … ]`.
    let status = status.rsplit(' ').next()?;
    let outcome = match status {
        "PASS" | "LEAK" => "ok",
        "SKIP" => "ignored",
        "FAIL" | "LEAK-FAIL" | "TIMEOUT" | "ABORT" => "FAILED",
        signal if signal.starts_with("SIG") => "FAILED",
        _ => return None,
    };
    let (_, rest) = rest.split_once("] ")?;
    let rest = match rest.strip_prefix('(') {
        Some(counted) => counted.split_once(") ")?.1,
        None => rest,
    };
    let mut words = rest.split_whitespace();
    let (binary, name) = (words.next()?, words.next()?);
    let is_live = binary == BINARY || binary.ends_with(&format!("::{BINARY}"));
    (is_live && words.next().is_none()).then(|| (name.to_string(), outcome.to_string()))
}

/// How a nextest run's outcomes compare with a `cargo test` run's of the same filter.
#[derive(Debug, Default, PartialEq)]
pub struct Comparison {
    /// Outcomes that differ for no reason the runners explain: the times are not comparable.
    pub differences: Vec<String>,
    /// Outcomes that differ only in how the runners show them, each said with its reason.
    pub explained: Vec<String>,
}

/// Compares `cargo_test` (libtest's outcomes) with `nextest`'s. Two differences are the runners'
/// own and are explained, not counted: a scenario that skipped at run time is `ignored` under
/// libtest and a pass under nextest (which judges a test process by its exit status), and a
/// scenario that needs a peer in its own process is listed as ignored under nextest's process
/// per test while `cargo test` runs it.
pub fn compare(
    cargo_test: &BTreeMap<String, String>,
    nextest: &BTreeMap<String, String>,
) -> Comparison {
    let mut comparison = Comparison::default();
    let names: std::collections::BTreeSet<&String> =
        cargo_test.keys().chain(nextest.keys()).collect();
    for name in names {
        let (a, b) = (cargo_test.get(name), nextest.get(name));
        match (a.map(String::as_str), b.map(String::as_str)) {
            (Some(a), Some(b)) if a == b => {}
            // nextest shows the scenarios its filter left out as skipped; libtest does not list
            // them.
            (None, Some("ignored")) => {}
            (Some("ignored"), Some("ok")) => comparison.explained.push(format!(
                "{name}: skipped at run time under cargo test, a pass to nextest (it judges a \
                 process by its exit status)"
            )),
            (Some("ok"), Some("ignored")) => comparison.explained.push(format!(
                "{name}: passed under cargo test, listed as ignored under nextest (it needs a \
                 peer in its own process); compared as skipped"
            )),
            (a, b) => comparison.differences.push(format!(
                "{name}: {} under cargo test vs {} under nextest",
                a.unwrap_or("not run"),
                b.unwrap_or("not run")
            )),
        }
    }
    comparison
}

/// The run id in nextest's header line (`Nextest run ID <uuid> with nextest profile: default`):
/// every process of the run carries it as `NEXTEST_RUN_ID`.
pub fn run_id(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("Nextest run ID ")?;
        rest.split_whitespace().next().map(str::to_string)
    })
}
