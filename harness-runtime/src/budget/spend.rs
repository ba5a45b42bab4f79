//! What a scenario's turns spent: tokens and cost from what OpenCode reported for its assistant
//! messages, per turn and summed, and the model requests' timing from the model stream.
//!
//! A turn is a user message and the assistant messages answering it (`parentID`), in the order
//! the user messages were created. Its duration is wall time as the agent stamped it (from the
//! user message's creation to its last answer's completion) when the model was really talked
//! to; replayed, it is what the turn's model requests took when they were recorded (a replay
//! sends without the recorded pauses, so its own wall time is not the model's).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cassette::RequestTiming;
use crate::client::{MessageInfo, TokenCounts};

/// Where a scenario's times come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Clock {
    /// Measured as it happened (scripted, live, recording).
    Wall,
    /// Replayed: what the model took when the cassette was recorded.
    Recorded,
}

/// One turn's spend.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TurnSpend {
    /// Its assistant messages' tokens, added up.
    pub(crate) tokens: TokenCounts,
    /// Their cost, added up.
    pub(crate) cost: f64,
    /// How many assistant messages (model steps) answered.
    pub(crate) steps: usize,
    /// Its duration in ms (see the module docs); `None` when it did not complete, or, replayed,
    /// when no streamed request was served during it.
    pub(crate) duration_ms: Option<u64>,
}

/// A scenario's spend.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Spend {
    /// Where its times come from.
    pub(crate) clock: Clock,
    /// Every turn's tokens, added up.
    pub(crate) tokens: TokenCounts,
    /// Every turn's cost, added up.
    pub(crate) cost: f64,
    /// The turns, in order.
    pub(crate) turns: Vec<TurnSpend>,
    /// Each model request's time to its first token in ms, in order (`None`: no token came).
    /// Relayed or replayed: from the recorded chunks; scripted: as the script streamed.
    pub(crate) first_tokens_ms: Vec<Option<u64>>,
}

impl Spend {
    /// The spend of the turns `messages` tell (every message an agent reported, in any order)
    /// with the model requests `requests` (in order); `clock` says which times count.
    pub(crate) fn measure(
        messages: &[MessageInfo],
        requests: &[RequestTiming],
        clock: Clock,
    ) -> Self {
        let mut users: Vec<&MessageInfo> = messages.iter().filter(|m| !m.is_assistant()).collect();
        users.sort_by_key(|m| m.time.created);
        let mut answers: BTreeMap<&str, Vec<&MessageInfo>> = BTreeMap::new();
        for message in messages.iter().filter(|m| m.is_assistant()) {
            // An answer to no user message the agent reported is a turn of its own.
            let parent = message.parent_id.as_deref().unwrap_or(&message.id);
            answers.entry(parent).or_default().push(message);
        }
        let mut order: Vec<(u64, &str, Option<&MessageInfo>)> = users
            .iter()
            .map(|u| (u.time.created, u.id.as_str(), Some(*u)))
            .collect();
        for (parent, list) in &answers {
            if !users.iter().any(|u| u.id == *parent) {
                let created = list.iter().map(|m| m.time.created).min().unwrap_or(0);
                order.push((created, parent, None));
            }
        }
        order.sort_by_key(|(created, _, _)| *created);
        let turns: Vec<TurnSpend> = order
            .into_iter()
            .filter_map(|(_, id, user)| {
                let list = answers.get(id)?;
                Some(turn(user, list, requests, clock))
            })
            .collect();
        let reported = turns
            .iter()
            .fold(TokenCounts::default(), |sum, t| sum.plus(t.tokens));
        let reported_cost: f64 = turns.iter().map(|t| t.cost).sum();
        let (streamed, streamed_cost) = streamed(requests);
        // OpenCode's figures first; when it reported none (an agent that does not, a turn cut
        // short), what the model's own answers reported.
        let tokens = if reported == TokenCounts::default() {
            streamed
        } else {
            reported
        };
        Spend {
            clock,
            tokens,
            cost: if reported_cost == 0.0 {
                streamed_cost
            } else {
                reported_cost
            },
            turns,
            first_tokens_ms: requests.iter().map(|r| r.first_token_ms).collect(),
        }
    }
}

/// The tokens and cost the model requests' answers reported, added up.
fn streamed(requests: &[RequestTiming]) -> (TokenCounts, f64) {
    let tokens = requests
        .iter()
        .filter_map(|r| r.tokens)
        .fold(TokenCounts::default(), TokenCounts::plus);
    (tokens, requests.iter().filter_map(|r| r.cost).sum())
}

/// The spend of the turn of `user` (when reported) answered by `answers`.
fn turn(
    user: Option<&MessageInfo>,
    answers: &[&MessageInfo],
    requests: &[RequestTiming],
    clock: Clock,
) -> TurnSpend {
    let started = user
        .map(|u| u.time.created)
        .or_else(|| answers.iter().map(|m| m.time.created).min())
        .unwrap_or(0);
    let completed: Option<u64> = answers
        .iter()
        .map(|m| m.time.completed)
        .collect::<Option<Vec<u64>>>()
        .and_then(|all| all.into_iter().max());
    let duration_ms = match clock {
        Clock::Wall => completed.map(|end| end.saturating_sub(started)),
        Clock::Recorded => {
            let end = completed.unwrap_or(u64::MAX);
            let during: Vec<u64> = requests
                .iter()
                .filter(|r| {
                    r.served_at_ms
                        .is_some_and(|at| (started..=end).contains(&at))
                })
                .filter_map(|r| r.duration_ms)
                .collect();
            (!during.is_empty()).then(|| during.iter().sum())
        }
    };
    TurnSpend {
        tokens: answers
            .iter()
            .filter_map(|m| m.tokens())
            .fold(TokenCounts::default(), TokenCounts::plus),
        cost: answers.iter().filter_map(|m| m.cost()).sum(),
        steps: answers.len(),
        duration_ms,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A message as OpenCode reports it.
    pub(crate) fn message(
        id: &str,
        parent: Option<&str>,
        created: u64,
        completed: Option<u64>,
        spent: Option<(u64, u64, f64)>,
    ) -> MessageInfo {
        let mut value = json!({
            "id": id, "sessionID": "ses_1",
            "role": if parent.is_some() { "assistant" } else { "user" },
            "time": {"created": created},
        });
        if let Some(parent) = parent {
            value["parentID"] = json!(parent);
        }
        if let Some(completed) = completed {
            value["time"]["completed"] = json!(completed);
        }
        if let Some((input, output, cost)) = spent {
            value["tokens"] = json!({"input": input, "output": output, "reasoning": 0,
                                     "cache": {"read": 0, "write": 0}});
            value["cost"] = json!(cost);
        }
        serde_json::from_value(value).unwrap()
    }

    fn two_turns() -> Vec<MessageInfo> {
        vec![
            // Out of order on purpose: the agents' reports are not sorted.
            message("msg_u2", None, 5_000, None, None),
            message(
                "msg_a1",
                Some("msg_u1"),
                1_010,
                Some(1_900),
                Some((100, 20, 0.01)),
            ),
            message("msg_u1", None, 1_000, None, None),
            message(
                "msg_a2",
                Some("msg_u1"),
                1_900,
                Some(2_500),
                Some((150, 30, 0.02)),
            ),
            message(
                "msg_a3",
                Some("msg_u2"),
                5_010,
                Some(9_000),
                Some((300, 40, 0.04)),
            ),
        ]
    }

    #[test]
    fn turns_group_answers_by_their_user_message_and_add_up() {
        let spend = Spend::measure(&two_turns(), &[], Clock::Wall);
        assert_eq!(spend.turns.len(), 2);
        assert_eq!(spend.turns[0].steps, 2);
        assert_eq!(spend.turns[0].tokens.input, 250);
        assert_eq!(spend.turns[0].tokens.output, 50);
        assert_eq!(spend.turns[0].duration_ms, Some(1_500));
        assert_eq!(spend.turns[1].duration_ms, Some(4_000));
        assert_eq!(spend.tokens.total(), 640);
        assert!((spend.cost - 0.07).abs() < 1e-12, "{}", spend.cost);
    }

    #[test]
    fn an_unfinished_turn_has_no_duration() {
        let messages = vec![
            message("msg_u1", None, 1_000, None, None),
            message("msg_a1", Some("msg_u1"), 1_010, None, None),
        ];
        let spend = Spend::measure(&messages, &[], Clock::Wall);
        assert_eq!(spend.turns[0].duration_ms, None);
        assert_eq!(spend.tokens.total(), 0);
    }

    #[test]
    fn replayed_turns_take_what_their_requests_took_when_recorded() {
        let served = |at: u64, duration: u64, first: u64| RequestTiming {
            first_token_ms: Some(first),
            duration_ms: Some(duration),
            served_at_ms: Some(at),
            ..RequestTiming::default()
        };
        let requests = [
            served(1_020, 700, 300),
            served(1_950, 900, 2_410),
            served(5_020, 60, 10),
        ];
        let spend = Spend::measure(&two_turns(), &requests, Clock::Recorded);
        assert_eq!(spend.turns[0].duration_ms, Some(1_600));
        assert_eq!(spend.turns[1].duration_ms, Some(60));
        assert_eq!(
            spend.first_tokens_ms,
            vec![Some(300), Some(2_410), Some(10)]
        );
    }

    #[test]
    fn without_opencode_figures_the_answers_reported_usage_counts() {
        let reported = |input: u64, output: u64, cost: f64| RequestTiming {
            tokens: Some(TokenCounts {
                input,
                output,
                ..TokenCounts::default()
            }),
            cost: Some(cost),
            ..RequestTiming::default()
        };
        let requests = [reported(100, 20, 0.01), reported(50, 5, 0.002)];
        let unreported = vec![
            message("msg_u1", None, 1_000, None, None),
            message("msg_a1", Some("msg_u1"), 1_010, Some(1_900), None),
        ];
        let spend = Spend::measure(&unreported, &requests, Clock::Wall);
        assert_eq!((spend.tokens.input, spend.tokens.output), (150, 25));
        assert!((spend.cost - 0.012).abs() < 1e-12, "{}", spend.cost);
        // OpenCode's own figures win when it reported them.
        let spend = Spend::measure(&two_turns(), &requests, Clock::Wall);
        assert_eq!(spend.tokens.total(), 640);
    }
}
