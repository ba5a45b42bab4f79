//! A scenario's budget against what it spent: every limit it broke, each with the figure and the
//! limit, in the order the attribute lists the limits.

use std::time::Duration;

use super::spend::{Clock, Spend};
use crate::scenario::Budget;

/// Every breach of `budget` by `spend`, one line each (empty: within budget). Times measured as
/// they happened are held to the limit × `scale` (`LIVE_TIMEOUT_SCALE`); replayed times are
/// the recording's and held to the limit as written, so a replay decides the same everywhere.
pub(crate) fn breaches(budget: &Budget, spend: &Spend, scale: f64) -> Vec<String> {
    let mut found = Vec::new();
    let tokens = &spend.tokens;
    if let Some(limit) = budget.tokens.filter(|limit| tokens.total() > *limit) {
        found.push(format!(
            "budget: {} tokens > max_tokens {limit} (input {}, output {}, reasoning {})",
            tokens.total(),
            tokens.input,
            tokens.output,
            tokens.reasoning
        ));
    }
    for (name, spent, limit) in [
        ("input", tokens.input, budget.input_tokens),
        ("output", tokens.output, budget.output_tokens),
        ("reasoning", tokens.reasoning, budget.reasoning_tokens),
    ] {
        if let Some(limit) = limit.filter(|limit| spent > *limit) {
            found.push(format!(
                "budget: {spent} {name} tokens > max_{name}_tokens {limit}"
            ));
        }
    }
    if let Some(limit) = budget.cost.filter(|limit| spend.cost > *limit) {
        found.push(format!(
            "budget: cost {} > max_cost {limit} ({} turn(s))",
            cost(spend.cost),
            spend.turns.len()
        ));
    }
    let (scale, source) = match spend.clock {
        Clock::Wall => (scale, ""),
        Clock::Recorded => (1.0, ", as recorded"),
    };
    if let Some(limit) = budget.first_token {
        let allowed = allowed(limit, scale);
        let over: Vec<(usize, u64)> = spend
            .first_tokens_ms
            .iter()
            .enumerate()
            .filter_map(|(i, ms)| ms.map(|ms| (i + 1, ms)))
            .filter(|(_, ms)| Duration::from_millis(*ms) > allowed)
            .collect();
        if let Some(&(request, ms)) = over.iter().max_by_key(|(_, ms)| *ms) {
            let requests = spend.first_tokens_ms.len();
            let others = match over.len() {
                1 => String::new(),
                n => format!("; {n} of {requests} requests over"),
            };
            found.push(format!(
                "budget: first token after {} > max_first_token {}{} (request {request} of \
                 {requests}{source}{others})",
                seconds(ms),
                humantime::format_duration(limit),
                scaled(limit, scale),
            ));
        }
    }
    if let Some(limit) = budget.turn {
        let allowed = allowed(limit, scale);
        for (i, turn) in spend.turns.iter().enumerate() {
            if let Some(ms) = turn
                .duration_ms
                .filter(|ms| Duration::from_millis(*ms) > allowed)
            {
                found.push(format!(
                    "budget: turn {} took {} > max_turn {}{} ({} of {}{source})",
                    i + 1,
                    seconds(ms),
                    humantime::format_duration(limit),
                    scaled(limit, scale),
                    i + 1,
                    spend.turns.len(),
                ));
            }
        }
    }
    found
}

/// The limits `budget` sets that `spend` has no figure for: a time limit of a scenario whose
/// model has no stream to time (the scripted model's first token), said rather than passed in
/// silence.
pub(crate) fn unchecked(budget: &Budget, spend: &Spend) -> Vec<&'static str> {
    let mut unchecked = Vec::new();
    if budget.first_token.is_some() && spend.first_tokens_ms.iter().all(Option::is_none) {
        unchecked.push("max_first_token");
    }
    if budget.turn.is_some()
        && !spend.turns.is_empty()
        && spend.turns.iter().all(|t| t.duration_ms.is_none())
    {
        unchecked.push("max_turn");
    }
    unchecked
}

fn allowed(limit: Duration, scale: f64) -> Duration {
    limit.mul_f64(scale)
}

/// ` × LIVE_TIMEOUT_SCALE 2 = 4s` when the limit was scaled.
fn scaled(limit: Duration, scale: f64) -> String {
    if scale == 1.0 {
        return String::new();
    }
    format!(
        " × {} {scale} = {}",
        crate::settings::TIMEOUT_SCALE,
        humantime::format_duration(Duration::from_millis(
            allowed(limit, scale).as_millis() as u64
        ))
    )
}

/// `2.41s`.
pub(crate) fn seconds(ms: u64) -> String {
    format!("{:.2}s", ms as f64 / 1000.0)
}

/// A cost with the digits a small one needs (`0.0712`, `1.5`).
pub(crate) fn cost(cost: f64) -> String {
    let text = format!("{cost:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::spend::TurnSpend;
    use crate::client::TokenCounts;

    fn spend(clock: Clock, first_tokens_ms: Vec<Option<u64>>, turns_ms: &[u64]) -> Spend {
        Spend {
            clock,
            tokens: TokenCounts {
                input: 4800,
                output: 323,
                ..TokenCounts::default()
            },
            cost: 0.0712,
            turns: turns_ms
                .iter()
                .map(|ms| TurnSpend {
                    tokens: TokenCounts::default(),
                    cost: 0.0,
                    steps: 1,
                    duration_ms: Some(*ms),
                })
                .collect(),
            first_tokens_ms,
        }
    }

    #[test]
    fn within_budget_is_no_breach() {
        let budget = Budget {
            tokens: Some(5123),
            cost: Some(0.08),
            first_token: Some(Duration::from_secs(3)),
            turn: Some(Duration::from_secs(30)),
            ..Budget::NONE
        };
        let spent = spend(Clock::Wall, vec![Some(2410)], &[29_000]);
        assert_eq!(breaches(&budget, &spent, 1.0), Vec::<String>::new());
        assert_eq!(breaches(&Budget::NONE, &spent, 1.0), Vec::<String>::new());
    }

    #[test]
    fn every_breach_is_listed_with_its_figure_and_limit() {
        let budget = Budget {
            tokens: Some(4000),
            input_tokens: Some(4000),
            output_tokens: Some(400),
            cost: Some(0.05),
            first_token: Some(Duration::from_secs(2)),
            turn: Some(Duration::from_secs(30)),
            ..Budget::NONE
        };
        let spent = spend(
            Clock::Wall,
            vec![Some(300), None, Some(2410), Some(2100)],
            &[1_000, 31_250],
        );
        assert_eq!(
            breaches(&budget, &spent, 1.0),
            [
                "budget: 5123 tokens > max_tokens 4000 (input 4800, output 323, reasoning 0)",
                "budget: 4800 input tokens > max_input_tokens 4000",
                "budget: cost 0.0712 > max_cost 0.05 (2 turn(s))",
                "budget: first token after 2.41s > max_first_token 2s (request 3 of 4; 2 of 4 \
                 requests over)",
                "budget: turn 2 took 31.25s > max_turn 30s (2 of 2)",
            ]
        );
    }

    #[test]
    fn live_times_are_held_to_the_scaled_limit_and_replayed_ones_to_the_limit() {
        let budget = Budget {
            first_token: Some(Duration::from_secs(2)),
            ..Budget::NONE
        };
        let live = spend(Clock::Wall, vec![Some(2410)], &[]);
        assert_eq!(breaches(&budget, &live, 2.0), Vec::<String>::new());
        assert_eq!(
            breaches(&budget, &live, 1.1),
            [
                "budget: first token after 2.41s > max_first_token 2s × LIVE_TIMEOUT_SCALE 1.1 = \
              2s 200ms (request 1 of 1)"
            ]
        );
        let replayed = spend(Clock::Recorded, vec![Some(2410)], &[]);
        assert_eq!(
            breaches(&budget, &replayed, 2.0),
            ["budget: first token after 2.41s > max_first_token 2s (request 1 of 1, as recorded)"]
        );
    }

    #[test]
    fn a_time_limit_without_a_figure_is_said_unchecked() {
        let budget = Budget {
            first_token: Some(Duration::from_secs(2)),
            turn: Some(Duration::from_secs(2)),
            ..Budget::NONE
        };
        let scripted = spend(Clock::Wall, vec![], &[10]);
        assert_eq!(unchecked(&budget, &scripted), ["max_first_token"]);
        assert!(unchecked(&Budget::NONE, &scripted).is_empty());
    }

    #[test]
    fn costs_show_the_digits_they_need() {
        assert_eq!(cost(0.0712), "0.0712");
        assert_eq!(cost(1.5), "1.5");
        assert_eq!(cost(0.0), "0");
        assert_eq!(seconds(2410), "2.41s");
    }
}
