//! Reading a libtest run's stdout (pretty format, `--color never`): which scenario ended how.
//!
//! Std only: `tests/bench_output.rs` includes this file.

use std::collections::BTreeMap;

/// Every `test <name> ... <outcome>` line: name → `ok`, `FAILED` or `ignored` (a skip's reason,
/// which may carry durations, is left out so two runs compare equal).
pub fn outcomes(stdout: &str) -> BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|line| {
            let (name, outcome) = line.strip_prefix("test ")?.split_once(" ... ")?;
            let outcome = outcome.split([' ', ',']).next()?.trim();
            matches!(outcome, "ok" | "FAILED" | "ignored")
                .then(|| (name.trim().to_string(), outcome.to_string()))
        })
        .collect()
}

/// The names whose outcome differs between `a` and `b` (or that only one of them ran), each
/// as `name: a-outcome vs b-outcome`.
pub fn differences(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .filter(|name| a.get(*name) != b.get(*name))
        .map(|name| {
            let show = |m: &BTreeMap<String, String>| {
                m.get(name).cloned().unwrap_or_else(|| "not run".into())
            };
            format!("{name}: {} vs {}", show(a), show(b))
        })
        .collect()
}
