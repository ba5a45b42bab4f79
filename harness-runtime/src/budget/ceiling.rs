//! The run's ceiling on live-model spend (`LIVE_RUN_MAX_TOKENS`, `LIVE_RUN_MAX_COST`): what this
//! process's live-model scenarios (live or recording) spent so far, and the scenarios not
//! started once it was spent.
//!
//! Per process: `cargo test` runs a test binary's scenarios in one process, so the ceiling holds
//! for the binary's run; nextest runs each scenario in a process of its own, where it cannot.

use std::sync::Mutex;

use super::check::cost;
use super::spend::Spend;
use crate::settings;

/// The run's ceiling: `None` is no limit.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Ceiling {
    /// `LIVE_RUN_MAX_TOKENS`: input + output + reasoning tokens of every live-model scenario.
    pub(crate) tokens: Option<u64>,
    /// `LIVE_RUN_MAX_COST`: their cost.
    pub(crate) cost: Option<f64>,
}

impl Ceiling {
    /// This process's, from the environment (an invalid value counts as no limit: the runner
    /// refused it before any trial).
    pub(crate) fn from_env() -> Self {
        Ceiling {
            tokens: settings::run_max_tokens(),
            cost: settings::run_max_cost(),
        }
    }
}

/// What the run's live-model scenarios spent, and which were not started.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunSpend {
    pub(crate) tokens: u64,
    pub(crate) cost: f64,
    /// How many live-model runs of a body added to it.
    pub(crate) runs: usize,
    /// The scenarios the ceiling kept from starting, in the order they were refused.
    pub(crate) not_run: Vec<String>,
}

impl RunSpend {
    /// Why a new live-model scenario is not started under `ceiling`: the limit spent and the
    /// spend, or `None` while the ceiling is not reached.
    pub(crate) fn refusal(&self, ceiling: &Ceiling) -> Option<String> {
        let spent = if let Some(limit) = ceiling.tokens.filter(|limit| self.tokens >= *limit) {
            format!("{}={limit}", settings::RUN_MAX_TOKENS)
        } else if let Some(limit) = ceiling.cost.filter(|limit| self.cost >= *limit) {
            format!("{}={limit}", settings::RUN_MAX_COST)
        } else {
            return None;
        };
        Some(format!(
            "not started: the run's live-model ceiling {spent} is spent ({})",
            self.spent()
        ))
    }

    /// `5123 tokens, cost 0.02 by 1 live-model run`.
    fn spent(&self) -> String {
        format!(
            "{} tokens, cost {} spent by {} live-model run(s)",
            self.tokens,
            cost(self.cost),
            self.runs
        )
    }

    /// The run's last word on the ceiling: which scenarios it kept from running; `None` when
    /// it kept none.
    pub(crate) fn summary(&self, ceiling: &Ceiling) -> Option<String> {
        if self.not_run.is_empty() {
            return None;
        }
        let limits: Vec<String> = [
            ceiling
                .tokens
                .map(|l| format!("{}={l}", settings::RUN_MAX_TOKENS)),
            ceiling
                .cost
                .map(|l| format!("{}={l}", settings::RUN_MAX_COST)),
        ]
        .into_iter()
        .flatten()
        .collect();
        Some(format!(
            "live run ceiling: {} live-model scenario(s) not run: {} ({}; {})",
            self.not_run.len(),
            self.not_run.join(", "),
            limits.join(", "),
            self.spent()
        ))
    }
}

static RUN: Mutex<RunSpend> = Mutex::new(RunSpend {
    tokens: 0,
    cost: 0.0,
    runs: 0,
    not_run: Vec::new(),
});

fn run() -> std::sync::MutexGuard<'static, RunSpend> {
    // One addition or push per update: a poisoned lock still holds consistent data.
    RUN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Adds one live-model run's spend to the run's.
pub(crate) fn add(spend: &Spend) {
    let mut run = run();
    run.tokens = run.tokens.saturating_add(spend.tokens.total());
    run.cost += spend.cost;
    run.runs += 1;
}

/// Whether the live-model scenario `name` may start: `Err` with the reason when the run's
/// ceiling is spent (the scenario is then listed as not run).
pub(crate) fn admit(name: &str) -> Result<(), String> {
    let mut run = run();
    match run.refusal(&Ceiling::from_env()) {
        None => Ok(()),
        Some(reason) => {
            run.not_run.push(name.to_owned());
            Err(reason)
        }
    }
}

/// The run's last word on the ceiling (see [`RunSpend::summary`]).
pub(crate) fn summary() -> Option<String> {
    run().summary(&Ceiling::from_env())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spent(tokens: u64, cost: f64) -> RunSpend {
        RunSpend {
            tokens,
            cost,
            runs: 1,
            not_run: Vec::new(),
        }
    }

    #[test]
    fn a_ceiling_refuses_once_it_is_reached_and_names_the_limit_and_the_spend() {
        let ceiling = Ceiling {
            tokens: Some(4000),
            cost: None,
        };
        assert_eq!(spent(3999, 1.0).refusal(&ceiling), None);
        assert_eq!(
            spent(5123, 0.02).refusal(&ceiling).unwrap(),
            "not started: the run's live-model ceiling LIVE_RUN_MAX_TOKENS=4000 is spent \
             (5123 tokens, cost 0.02 spent by 1 live-model run(s))"
        );
        let by_cost = Ceiling {
            tokens: None,
            cost: Some(0.5),
        };
        assert!(spent(10, 0.4).refusal(&by_cost).is_none());
        assert!(
            spent(10, 0.5)
                .refusal(&by_cost)
                .unwrap()
                .contains("LIVE_RUN_MAX_COST=0.5 is spent")
        );
        assert_eq!(spent(u64::MAX, 9.0).refusal(&Ceiling::default()), None);
    }

    #[test]
    fn the_summary_names_the_scenarios_not_run() {
        let ceiling = Ceiling {
            tokens: Some(40),
            cost: Some(1.0),
        };
        assert_eq!(spent(50, 0.0).summary(&ceiling), None);
        let mut run = spent(50, 0.0);
        run.not_run = vec!["a::b".into(), "a::c".into()];
        assert_eq!(
            run.summary(&ceiling).unwrap(),
            "live run ceiling: 2 live-model scenario(s) not run: a::b, a::c \
             (LIVE_RUN_MAX_TOKENS=40, LIVE_RUN_MAX_COST=1; 50 tokens, cost 0 spent by 1 \
             live-model run(s))"
        );
    }
}
