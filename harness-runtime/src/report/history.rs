//! Each scenario's outcomes across recent runs (its last [`KEPT`], one per run of the suite) and
//! what they say of a failure: new (it passed the last [`NEW_AFTER`] runs or more), a known
//! flake (it passed last time and failed before), or a repeat (it failed last time too).
//! Pure rules; the files are `history_file`'s.

use serde::{Deserialize, Serialize};

/// Outcomes kept per scenario: enough to tell a flake from a new failure, small enough to read
/// and rewrite at every run.
pub(crate) const KEPT: usize = 20;
/// Passes in a row, with no failure kept, before a failure is called new.
pub(crate) const NEW_AFTER: usize = 3;
/// The longest failure line kept, in characters.
const FAILURE_CHARS: usize = 160;

/// A scenario's outcome in one run of the suite.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct PastOutcome {
    /// The report's run id: the processes of one nextest run share it, so a scenario retried in
    /// the run, or run by several of its processes, counts once (as it ended last).
    pub(crate) run: String,
    /// When it ended, UTC, to the second (`2026-12-02T02:33:23Z`).
    pub(crate) at: String,
    pub(crate) outcome: HistoryOutcome,
    /// The failure's first line, as redacted for the report, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
    /// A verdict over several runs (`passes = "K of N"`), as its record says it: `3 of 4 passed
    /// (3 of 5 needed)`. The verdict is the outcome: one per run of the suite, not per inner run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<String>,
}

/// How a scenario that ran ended (an ignored one did not run: it is not kept). Its own type, not
/// the record's outcome: the record holds the history, so the history cannot name the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum HistoryOutcome {
    Passed,
    Failed,
    Skipped,
}

impl PastOutcome {
    /// The outcome in the run `run`, ended `at`, with its failure (redacted already) if any.
    pub(crate) fn new(
        run: &str,
        at: String,
        outcome: HistoryOutcome,
        failure: Option<&str>,
    ) -> Self {
        PastOutcome {
            run: run.to_owned(),
            at,
            outcome,
            failure: failure.map(first_line),
            verdict: None,
        }
    }

    fn verdict(&self) -> Option<bool> {
        match self.outcome {
            HistoryOutcome::Passed => Some(true),
            HistoryOutcome::Failed => Some(false),
            HistoryOutcome::Skipped => None,
        }
    }
}

/// The first line that says something, at most [`FAILURE_CHARS`] characters.
fn first_line(failure: &str) -> String {
    let line = failure
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    match line.char_indices().nth(FAILURE_CHARS) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_owned(),
    }
}

/// One scenario's file: its name (a file name cannot hold every name) and its outcomes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScenarioHistory {
    pub(crate) scenario: String,
    /// Oldest first, at most [`KEPT`].
    pub(crate) outcomes: Vec<PastOutcome>,
}

impl ScenarioHistory {
    pub(crate) fn new(scenario: &str) -> Self {
        ScenarioHistory {
            scenario: scenario.to_owned(),
            outcomes: Vec::new(),
        }
    }

    /// Adds `outcome`, replacing the one of the same run, and forgets the oldest beyond [`KEPT`].
    pub(crate) fn add(&mut self, outcome: PastOutcome) {
        self.outcomes.retain(|o| o.run != outcome.run);
        self.outcomes.push(outcome);
        let excess = self.outcomes.len().saturating_sub(KEPT);
        self.outcomes.drain(..excess);
    }

    /// What the history says with `current` as its newest outcome (the history as read before
    /// the run: an outcome of the same run, an earlier try, is replaced).
    pub(crate) fn summary(&self, current: PastOutcome) -> HistorySummary {
        let failed = current.outcome == HistoryOutcome::Failed;
        let mut all = self.clone();
        all.add(current);
        let (before, _) = all.outcomes.split_at(all.outcomes.len() - 1);
        let verdicts: Vec<bool> = all
            .outcomes
            .iter()
            .filter_map(PastOutcome::verdict)
            .collect();
        let standing = failed.then(|| Standing::of_failure(before));
        HistorySummary {
            passed: verdicts.iter().filter(|passed| **passed).count(),
            verdicts: verdicts.len(),
            standing: standing.map(|s| s.key().to_owned()),
            line: standing.map(|s| s.line()),
            recent: all.outcomes,
        }
    }
}

/// What a failure is, from the outcomes before it (oldest first; skips say nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Standing {
    /// No earlier pass or failure kept.
    First,
    /// It passed every earlier run kept, `passes` of them, at least [`NEW_AFTER`].
    New { passes: usize },
    /// It passed every earlier run kept, but fewer than [`NEW_AFTER`].
    Unsure { passes: usize },
    /// It passed last time and failed before: `failed` of the last `runs`, this one included.
    KnownFlake { failed: usize, runs: usize },
    /// It failed last time too: the last `in_a_row` runs, this one included.
    Repeat { in_a_row: usize },
}

impl Standing {
    pub(crate) fn of_failure(before: &[PastOutcome]) -> Self {
        let verdicts: Vec<bool> = before.iter().filter_map(PastOutcome::verdict).collect();
        match verdicts.last() {
            None => Standing::First,
            Some(false) => Standing::Repeat {
                in_a_row: 1 + verdicts.iter().rev().take_while(|passed| !**passed).count(),
            },
            Some(true) if verdicts.contains(&false) => Standing::KnownFlake {
                failed: 1 + verdicts.iter().filter(|passed| !**passed).count(),
                runs: 1 + verdicts.len(),
            },
            Some(true) if verdicts.len() >= NEW_AFTER => Standing::New {
                passes: verdicts.len(),
            },
            Some(true) => Standing::Unsure {
                passes: verdicts.len(),
            },
        }
    }

    /// The page's name for it (a badge's class).
    pub(crate) fn key(self) -> &'static str {
        match self {
            Standing::First => "first",
            Standing::New { .. } => "new",
            Standing::Unsure { .. } => "unsure",
            Standing::KnownFlake { .. } => "flake",
            Standing::Repeat { .. } => "repeat",
        }
    }

    /// What the end of the run says of the failure.
    pub(crate) fn line(self) -> String {
        match self {
            Standing::First => "first failure on record (no earlier run to compare)".to_owned(),
            Standing::New { passes } => format!("new failure (passed the last {passes} runs)"),
            Standing::Unsure { passes } => format!(
                "failed after passing the last {} (too few to call it new)",
                runs(passes)
            ),
            Standing::KnownFlake { failed, runs } => {
                format!("known flake: failed {failed} of the last {runs} runs")
            }
            Standing::Repeat { in_a_row } => {
                format!("repeat failure: failed the last {in_a_row} runs")
            }
        }
    }
}

fn runs(n: usize) -> String {
    match n {
        1 => "run".to_owned(),
        n => format!("{n} runs"),
    }
}

/// What the report shows of a scenario's history, this run's outcome included.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct HistorySummary {
    /// Passes among the passes and failures kept (the pass rate's numerator).
    pub(crate) passed: usize,
    /// Passes and failures kept (skips are neither).
    pub(crate) verdicts: usize,
    /// A failure's [`Standing::key`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) standing: Option<String>,
    /// A failure's [`Standing::line`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<String>,
    /// The outcomes kept, oldest first, this run's last.
    pub(crate) recent: Vec<PastOutcome>,
}

#[cfg(test)]
mod tests {
    use super::HistoryOutcome as Outcome;
    use super::*;

    fn past(run: usize, outcome: Outcome) -> PastOutcome {
        PastOutcome {
            run: format!("r{run}"),
            at: format!("2026-12-02T00:00:{:02}Z", run % 60),
            outcome,
            failure: (outcome == Outcome::Failed).then(|| format!("failed in run {run}")),
            verdict: None,
        }
    }

    /// A history of `outcomes` (`P`, `F`, `S`), runs numbered from 1.
    fn history(outcomes: &str) -> ScenarioHistory {
        let mut history = ScenarioHistory::new("a::b");
        for (i, c) in outcomes.chars().enumerate() {
            history.add(past(i + 1, outcome(c)));
        }
        history
    }

    fn outcome(c: char) -> Outcome {
        match c {
            'P' => Outcome::Passed,
            'F' => Outcome::Failed,
            'S' => Outcome::Skipped,
            _ => unreachable!("{c}"),
        }
    }

    /// The standing of a failure after `before`.
    fn standing(before: &str) -> Standing {
        Standing::of_failure(&history(before).outcomes)
    }

    #[test]
    fn a_failure_is_new_a_flake_a_repeat_or_too_early_to_tell() {
        assert_eq!(standing(""), Standing::First);
        assert_eq!(standing("SS"), Standing::First, "skips say nothing");
        assert_eq!(standing("PP"), Standing::Unsure { passes: 2 });
        assert_eq!(standing("PPP"), Standing::New { passes: 3 });
        assert_eq!(standing("PPSPPSPPPPPPPP"), Standing::New { passes: 12 });
        assert_eq!(
            standing("PFPPP"),
            Standing::KnownFlake { failed: 2, runs: 6 }
        );
        assert_eq!(
            standing("FPPFPS"),
            Standing::KnownFlake { failed: 3, runs: 6 },
            "a skip after the last pass changes nothing"
        );
        assert_eq!(standing("PPPF"), Standing::Repeat { in_a_row: 2 });
        assert_eq!(standing("PFFSF"), Standing::Repeat { in_a_row: 4 });
        assert_eq!(standing("FFF"), Standing::Repeat { in_a_row: 4 });
    }

    #[test]
    fn the_end_of_the_run_says_what_a_failure_is() {
        assert_eq!(
            Standing::New { passes: 12 }.line(),
            "new failure (passed the last 12 runs)"
        );
        assert_eq!(
            Standing::KnownFlake {
                failed: 3,
                runs: 20
            }
            .line(),
            "known flake: failed 3 of the last 20 runs"
        );
        assert_eq!(
            Standing::Repeat { in_a_row: 2 }.line(),
            "repeat failure: failed the last 2 runs"
        );
        assert_eq!(
            Standing::Unsure { passes: 1 }.line(),
            "failed after passing the last run (too few to call it new)"
        );
        assert_eq!(
            Standing::First.line(),
            "first failure on record (no earlier run to compare)"
        );
    }

    /// Twenty-five runs keep the newest twenty; the failure 18 runs back is still known then.
    #[test]
    fn the_history_keeps_the_last_twenty_outcomes() {
        let mut history = history(&format!("F{}", "P".repeat(6)));
        for run in 8..=25 {
            history.add(past(run, Outcome::Passed));
        }
        assert_eq!(history.outcomes.len(), KEPT);
        assert_eq!(history.outcomes[0].run, "r6");
        assert_eq!(history.outcomes[KEPT - 1].run, "r25");
        assert_eq!(
            Standing::of_failure(&history.outcomes),
            Standing::New { passes: 20 },
            "the failure of run 1 is forgotten"
        );
        let mut recent = ScenarioHistory::new("a::b");
        recent.add(past(1, Outcome::Failed));
        for run in 2..=19 {
            recent.add(past(run, Outcome::Passed));
        }
        assert_eq!(
            Standing::of_failure(&recent.outcomes),
            Standing::KnownFlake {
                failed: 2,
                runs: 20
            }
        );
    }

    /// A scenario retried in one run (nextest's retries, one run id) counts once, as it ended last.
    #[test]
    fn one_run_adds_one_outcome() {
        let mut history = history("PP");
        history.add(past(3, Outcome::Failed));
        history.add(past(3, Outcome::Passed));
        assert_eq!(history.outcomes.len(), 3);
        assert_eq!(history.outcomes[2].outcome, Outcome::Passed);

        let summary = history.summary(past(3, Outcome::Failed));
        assert_eq!(summary.recent.len(), 3, "the earlier try is replaced");
        assert_eq!(
            summary.standing.as_deref(),
            Some("unsure"),
            "judged by the runs before"
        );
    }

    #[test]
    fn the_summary_has_the_pass_rate_and_the_recent_outcomes() {
        let summary = history("PFPSPPP").summary(past(8, Outcome::Failed));
        assert_eq!((summary.passed, summary.verdicts), (5, 7));
        assert_eq!(summary.standing.as_deref(), Some("flake"));
        assert_eq!(
            summary.line.as_deref(),
            Some("known flake: failed 2 of the last 7 runs")
        );
        assert_eq!(summary.recent.len(), 8);
        assert_eq!(
            summary.recent[7].failure.as_deref(),
            Some("failed in run 8")
        );

        let passing = history("PF").summary(past(3, Outcome::Passed));
        assert_eq!((passing.passed, passing.verdicts), (2, 3));
        assert_eq!(passing.standing, None, "only a failure has a standing");
        assert_eq!(passing.line, None);
    }

    #[test]
    fn a_failure_keeps_its_first_line_shortened() {
        let failure = format!("\n  {}\nat src/x.rs:3\n", "x".repeat(300));
        let kept = PastOutcome::new("r", "t".into(), Outcome::Failed, Some(&failure));
        let line = kept.failure.unwrap();
        assert_eq!(line.chars().count(), FAILURE_CHARS + 1);
        assert!(line.ends_with("x…"), "{line}");
    }
}
