//! What one exploring run did at its decision points: the decisions, the steps in the order
//! they went, and whether the plan stopped fitting. The explorer searches with it; failure
//! messages and the run report show it.

use serde::Serialize;

use super::{Choice, Schedule, Step};

/// One decision: more than one step was held, one went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Decision {
    /// 1-based.
    pub(crate) n: u32,
    /// The held steps, oldest first.
    pub(crate) held: Vec<Step>,
    /// The index in `held` of the one that went.
    pub(crate) chosen: usize,
}

impl Decision {
    /// The step that went.
    pub(crate) fn step(&self) -> &Step {
        &self.held[self.chosen]
    }
}

/// A step as it went, in release order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Released {
    pub(crate) step: Step,
    /// The decision it went at, when others were held with it.
    pub(crate) decision: Option<u32>,
    /// It was not the oldest held step: the schedule deviated here.
    pub(crate) deviated: bool,
    /// The labels of the steps held with it.
    pub(crate) held_with: Vec<String>,
}

/// One run's record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub(crate) struct RunRecord {
    pub(crate) decisions: Vec<Decision>,
    pub(crate) released: Vec<Released>,
    /// Where the plan did not fit: a deviation whose two steps never met (the run took the
    /// default order there).
    pub(crate) divergence: Option<String>,
    /// Where the agent had not settled within the scheduler's ceiling when a step went: what it
    /// was still doing. Such a step's place relative to the agent's progress was timing.
    pub(crate) unsettled: Vec<String>,
}

impl RunRecord {
    /// The run's schedule: at each decision that did not take the oldest held step, the step
    /// that went over the oldest one.
    pub(crate) fn schedule(&self) -> Schedule {
        Schedule::new(
            self.decisions
                .iter()
                .filter(|d| d.chosen != 0)
                .map(|d| Choice {
                    first: d.step().id(),
                    over: d.held[0].id(),
                })
                .collect(),
        )
    }

    /// At each decision, the index chosen and how many were held.
    pub(crate) fn path(&self) -> Vec<(usize, usize)> {
        self.decisions
            .iter()
            .map(|d| (d.chosen, d.held.len()))
            .collect()
    }

    /// The decisions for a failure message, one per line: what went, what waited.
    pub(crate) fn describe_decisions(&self, at_most: usize) -> String {
        let mut lines = Vec::new();
        for decision in self.decisions.iter().take(at_most) {
            let waited: Vec<&str> = decision
                .held
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != decision.chosen)
                .map(|(_, step)| step.label.as_str())
                .collect();
            let mark = if decision.chosen != 0 {
                " (deviates)"
            } else {
                ""
            };
            lines.push(format!(
                "  {}. {}{mark}; held: {}",
                decision.n,
                decision.step().label,
                waited.join(", ")
            ));
        }
        if self.decisions.len() > at_most {
            lines.push(format!(
                "  … {} more decisions",
                self.decisions.len() - at_most
            ));
        }
        if lines.is_empty() {
            lines.push("  (none: never more than one step was held at a time)".into());
        }
        // Where the order was the machine's timing, not the schedule's, the reader must know.
        for unsettled in &self.unsettled {
            lines.push(format!("  note: {unsettled}"));
        }
        lines.join("\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decisions_say_where_the_agent_had_not_settled() {
        let record = RunRecord {
            decisions: vec![Decision {
                n: 1,
                held: vec![Step::model(1), Step::product("subscribe", 1)],
                chosen: 1,
            }],
            unsettled: vec![
                "the agent had not settled within 30s (it was working on the \
                             prompt) when product subscribe went"
                    .into(),
            ],
            ..RunRecord::default()
        };
        assert_eq!(
            record.describe_decisions(40),
            "  1. product subscribe (deviates); held: model answer 1\n  note: the agent had not \
             settled within 30s (it was working on the prompt) when product subscribe went"
        );
    }
}
