//! An exploring scenario's part of its record: how many schedules ran, whether the space was
//! exhausted, the failing schedule (shrunk) and the steps of the run shown as a sequence diagram
//! (product / forwarder / agent lanes).

use serde::{Deserialize, Serialize};

use crate::redact::Redactor;

/// What the exploring runner tells the report of one scenario's search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct ExplorationRecord {
    /// `exhaustive`, `random` or `replay` (`LIVE_SCHEDULE` set).
    pub(crate) mode: String,
    /// The scenario's own seed (random search); none for a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) seed: Option<u64>,
    /// The runs budget (`explore = N`).
    pub(crate) budget_runs: u32,
    /// Bodies run in all: the search, shrinking and the confirming replays.
    pub(crate) runs: u32,
    /// Schedules tried before the verdict.
    pub(crate) schedules: u32,
    /// The whole space was tried.
    pub(crate) exhausted: bool,
    /// The space's size, when it was exhausted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) space: Option<u64>,
    pub(crate) failed: bool,
    /// The failing schedule, shrunk (`da2a.1>b7c1.1`, or `fifo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) schedule: Option<String>,
    /// The failing schedule as found, before shrinking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) found: Option<String>,
    /// Runs spent shrinking.
    #[serde(default)]
    pub(crate) shrink_runs: u32,
    /// Failing replays of the shrunk schedule, of how many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reproduced: Option<(u32, u32)>,
    /// The line that replays the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) replay_command: Option<String>,
    /// Where a replayed schedule no longer fit the run (the code changed), as the runner says
    /// it: the decision, the tag and what was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) diverged: Option<String>,
    /// The failing run's released steps in order (the last run's when every run passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) steps: Vec<DiagramStep>,
    /// Steps that were no decision left out of a run too long to show (see
    /// [`ExplorationRecord::folded`]); the runner leaves it 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) steps_left_out: u32,
}

/// One released step of the diagram's run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct DiagramStep {
    /// `request`, `response`, `event`, `product` or `model` (the model's answer to the agent:
    /// its progress).
    pub(crate) kind: String,
    /// `request POST /session/{sessionID}/abort`, `event session.idle (stream 1)`, `product
    /// before_reply`.
    pub(crate) label: String,
    /// `Some(n)` when it was released at decision n (several were held).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) decision: Option<u32>,
    /// It was not the default (oldest) choice: a preemption of the schedule.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) deviated: bool,
    /// The labels of the other steps held at that decision.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) held: Vec<String>,
    /// How many more times the same step passed right after it (`event message.part.delta`
    /// ×12 is one step with 11 repeats). Left 0 by the runner: [`ExplorationRecord::folded`]
    /// counts them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) repeats: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Steps kept in a record: a run's stream can pass thousands of events; the decisions are what
/// the diagram is for, and a record is concatenated into the page on every regeneration.
const MAX_STEPS: usize = 2000;

impl ExplorationRecord {
    /// Repeats in a row of the same step that was no decision folded into one (a stream's
    /// deltas), and at most [`MAX_STEPS`] kept: every decision, and the first other steps up to
    /// what is left (the ones left out counted in `steps_left_out`).
    pub(crate) fn folded(mut self) -> Self {
        let mut steps: Vec<DiagramStep> = Vec::with_capacity(self.steps.len().min(MAX_STEPS));
        for step in std::mem::take(&mut self.steps) {
            if let Some(last) = steps.last_mut() {
                if step.decision.is_none()
                    && last.decision.is_none()
                    && step.kind == last.kind
                    && step.label == last.label
                {
                    last.repeats += 1 + step.repeats;
                    continue;
                }
            }
            steps.push(step);
        }
        if steps.len() > MAX_STEPS {
            let decisions = steps.iter().filter(|s| s.decision.is_some()).count();
            let mut others_left = MAX_STEPS.saturating_sub(decisions);
            let mut kept: Vec<DiagramStep> = Vec::with_capacity(MAX_STEPS);
            for step in steps {
                if step.decision.is_some() || others_left > 0 {
                    if step.decision.is_none() {
                        others_left -= 1;
                    }
                    kept.push(step);
                } else {
                    self.steps_left_out += 1 + step.repeats;
                }
            }
            steps = kept;
        }
        self.steps = steps;
        self
    }

    /// Every string through `redactor`, as the rest of the record.
    pub(crate) fn redacted(mut self, redactor: &Redactor) -> Self {
        let text = |s: &mut String| *s = redactor.redact(s);
        text(&mut self.mode);
        self.schedule.as_mut().map(text);
        self.found.as_mut().map(text);
        self.replay_command.as_mut().map(text);
        self.diverged.as_mut().map(text);
        for step in &mut self.steps {
            text(&mut step.kind);
            text(&mut step.label);
            step.held.iter_mut().for_each(text);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(label: &str, decision: Option<u32>) -> DiagramStep {
        DiagramStep {
            kind: label.split(' ').next().unwrap().to_owned(),
            label: label.to_owned(),
            decision,
            ..DiagramStep::default()
        }
    }

    /// A stream's deltas fold into one step; a decision never folds, nor what follows it.
    #[test]
    fn repeats_in_a_row_fold_but_decisions_stay() {
        let delta = "event message.part.delta (stream 1)";
        let record = ExplorationRecord {
            steps: vec![
                step(delta, None),
                step(delta, None),
                step(delta, None),
                step(delta, Some(1)),
                step(delta, None),
                step("request POST /session/{sessionID}/abort", None),
                step(delta, None),
            ],
            ..ExplorationRecord::default()
        }
        .folded();
        let shown: Vec<(Option<u32>, u32)> = record
            .steps
            .iter()
            .map(|s| (s.decision, s.repeats))
            .collect();
        assert_eq!(
            shown,
            [(None, 2), (Some(1), 0), (None, 0), (None, 0), (None, 0)]
        );
    }

    /// A run too long to show keeps every decision and counts what it left out.
    #[test]
    fn a_long_run_keeps_every_decision() {
        let mut steps = Vec::new();
        for i in 0..MAX_STEPS as u32 + 500 {
            steps.push(step(&format!("request GET /r{}", i % 2), None));
        }
        steps.push(step("request POST /late", Some(1)));
        let record = ExplorationRecord {
            steps,
            ..ExplorationRecord::default()
        }
        .folded();
        assert_eq!(record.steps.len(), MAX_STEPS);
        assert_eq!(record.steps.last().unwrap().decision, Some(1));
        let shown: u32 = record.steps.iter().map(|s| 1 + s.repeats).sum();
        assert_eq!(
            shown + record.steps_left_out,
            MAX_STEPS as u32 + 501,
            "every step counted"
        );
        assert_eq!(record.steps_left_out, 501);
    }
}
