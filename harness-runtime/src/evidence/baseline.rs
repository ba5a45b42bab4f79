//! The evidence of an exploring scenario: its first run asserts the snapshot, and every later
//! run, under another schedule, must record the same evidence. So the accepted snapshot is that
//! of every passing run, not of whichever ordering happened to run first.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::Evidence;

/// The evidence texts of an exploration's first run, by snapshot name (`""` for the main one).
#[derive(Debug, Default)]
pub(crate) struct Baseline {
    texts: Mutex<BTreeMap<String, String>>,
}

/// Evidence that differs from the first run's.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Differs {
    /// The first lines that differ, `-` the first run's, `+` this run's, with a line of context.
    pub(crate) diff: String,
}

impl Baseline {
    /// Compares `evidence`, asserted under `name`, with the first run's that matched the
    /// snapshot: `Ok(true)` when there is none yet (the caller asserts the snapshot, then
    /// [`accepted`](Self::accepted)), `Ok(false)` when it equals it, the difference otherwise.
    pub(crate) fn check(&self, name: &str, evidence: &Evidence) -> Result<bool, Differs> {
        let text = text(evidence);
        let texts = self.texts.lock().unwrap_or_else(PoisonError::into_inner);
        match texts.get(name) {
            None => Ok(true),
            Some(first) if *first == text => Ok(false),
            Some(first) => Err(Differs {
                diff: line_diff(first, &text),
            }),
        }
    }

    /// `evidence` matched the snapshot `name`: later runs must record the same.
    pub(crate) fn accepted(&self, name: &str, evidence: &Evidence) {
        self.texts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), text(evidence));
    }
}

fn text(evidence: &Evidence) -> String {
    serde_json::to_string_pretty(evidence).unwrap_or_default()
}

/// The first differing lines of `a` and `b` (at most 12), with the line before as context.
fn line_diff(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let same = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[same..]
        .iter()
        .rev()
        .zip(b[same..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = Vec::new();
    if same > 0 {
        out.push(format!("  {}", a[same - 1]));
    }
    let removed = &a[same..a.len() - tail];
    let added = &b[same..b.len() - tail];
    for line in removed.iter().take(6) {
        out.push(format!("- {line}"));
    }
    for line in added.iter().take(6) {
        out.push(format!("+ {line}"));
    }
    if removed.len() > 6 || added.len() > 6 {
        out.push("  …".into());
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::redact::Redactor;

    fn evidence(value: &str) -> Evidence {
        let evidence = Evidence::new(Arc::new(Redactor::for_scenario()));
        evidence.record("outcome", value);
        evidence.record("asks", 1);
        evidence
    }

    #[test]
    fn the_first_run_sets_the_evidence_every_later_run_must_match() {
        let baseline = Baseline::default();
        assert_eq!(baseline.check("", &evidence("aborted")), Ok(true));
        // Until a run's evidence matched the snapshot, every run asserts it.
        assert_eq!(baseline.check("", &evidence("completed")), Ok(true));
        baseline.accepted("", &evidence("aborted"));
        assert_eq!(baseline.check("", &evidence("aborted")), Ok(false));
        assert_eq!(baseline.check("turn", &evidence("completed")), Ok(true));
        let differs = baseline.check("", &evidence("completed")).unwrap_err();
        assert!(
            differs.diff.contains("- ") && differs.diff.contains("aborted"),
            "{}",
            differs.diff
        );
        assert!(
            differs.diff.contains("+ ") && differs.diff.contains("completed"),
            "{}",
            differs.diff
        );
        assert!(!differs.diff.contains("asks\": 1\n-"), "{}", differs.diff);
    }
}
