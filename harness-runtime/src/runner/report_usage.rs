//! The run report's usage record of a scenario: what its measured spend (`budget/`) becomes in
//! the report's plain data, here so that `report/` depends on no layer below it.

use crate::budget::{Clock, Spend};
use crate::report::{TurnUsage, UsageRecord};

/// The report's record of `spend`; `None` when the scenario's agents reported no turn.
pub(super) fn usage_record(spend: &Spend) -> Option<UsageRecord> {
    if spend.turns.is_empty() && spend.first_tokens_ms.is_empty() {
        return None;
    }
    let replayed = spend.clock == Clock::Recorded;
    Some(UsageRecord {
        clock: if replayed { "recorded" } else { "wall" }.to_owned(),
        input: spend.tokens.input,
        output: spend.tokens.output,
        reasoning: spend.tokens.reasoning,
        cache_read: spend.tokens.cache_read,
        cache_write: spend.tokens.cache_write,
        cost: spend.cost,
        avoided_cost: replayed.then_some(spend.cost),
        requests: spend.first_tokens_ms.len(),
        slowest_first_token: spend
            .first_tokens_ms
            .iter()
            .enumerate()
            .filter_map(|(i, ms)| ms.map(|ms| (i + 1, ms)))
            .max_by_key(|(_, ms)| *ms),
        turns: spend
            .turns
            .iter()
            .map(|t| TurnUsage {
                input: t.tokens.input,
                output: t.tokens.output,
                reasoning: t.tokens.reasoning,
                cost: t.cost,
                steps: t.steps,
                duration_ms: t.duration_ms,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::TurnSpend;
    use crate::client::TokenCounts;

    fn spend(clock: Clock) -> Spend {
        let tokens = TokenCounts {
            input: 90,
            output: 12,
            ..TokenCounts::default()
        };
        Spend {
            clock,
            tokens,
            cost: 0.25,
            turns: vec![TurnSpend {
                tokens,
                cost: 0.25,
                steps: 2,
                duration_ms: Some(1200),
            }],
            first_tokens_ms: vec![Some(40), None, Some(900)],
        }
    }

    #[test]
    fn a_replay_records_the_cost_it_avoided_and_a_live_run_does_not() {
        let replayed = usage_record(&spend(Clock::Recorded)).unwrap();
        assert_eq!(replayed.avoided_cost, Some(0.25));
        assert_eq!(replayed.clock, "recorded");
        assert_eq!(replayed.slowest_first_token, Some((3, 900)));
        assert_eq!(replayed.turns[0].duration_ms, Some(1200));
        let live = usage_record(&spend(Clock::Wall)).unwrap();
        assert_eq!(live.avoided_cost, None);
        let json = serde_json::to_value(&live).unwrap();
        assert!(json.get("cache_read").is_none(), "{json}");
        let back: UsageRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, live);
    }

    #[test]
    fn no_turn_is_no_record() {
        let mut nothing = spend(Clock::Wall);
        nothing.turns.clear();
        nothing.first_tokens_ms.clear();
        assert_eq!(usage_record(&nothing), None);
    }
}
