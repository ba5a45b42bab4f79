//! What an assistant message spent, as OpenCode reports it in the message's info (`tokens`,
//! `cost`): typed readers over the fields [`MessageInfo`] keeps in `extra`.

use serde::Serialize;
use serde_json::Value;

use super::types::MessageInfo;

/// The tokens of one assistant message (`info.tokens`), or of several added up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TokenCounts {
    /// Prompt tokens not read from the cache (`tokens.input`).
    pub input: u64,
    /// Completion tokens (`tokens.output`).
    pub output: u64,
    /// Reasoning tokens (`tokens.reasoning`).
    pub reasoning: u64,
    /// Prompt tokens read from the provider's cache (`tokens.cache.read`).
    pub cache_read: u64,
    /// Prompt tokens written to the provider's cache (`tokens.cache.write`).
    pub cache_write: u64,
}

impl TokenCounts {
    /// Input + output + reasoning: what `max_tokens` limits (cache reads and writes are
    /// reported, not counted: a provider bills them apart).
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.reasoning)
    }

    /// Both counts added, field by field.
    pub fn plus(self, other: TokenCounts) -> TokenCounts {
        TokenCounts {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            reasoning: self.reasoning.saturating_add(other.reasoning),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
        }
    }
}

impl MessageInfo {
    /// The tokens OpenCode reports for this message (`info.tokens`); `None` when it reports none
    /// (a user message, an assistant message still waiting for its model). A count missing
    /// from the object reads as 0.
    pub fn tokens(&self) -> Option<TokenCounts> {
        let tokens = self.extra.get("tokens")?.as_object()?;
        let count = |value: Option<&Value>| value.and_then(Value::as_u64).unwrap_or(0);
        let cache = tokens.get("cache");
        Some(TokenCounts {
            input: count(tokens.get("input")),
            output: count(tokens.get("output")),
            reasoning: count(tokens.get("reasoning")),
            cache_read: count(cache.and_then(|c| c.get("read"))),
            cache_write: count(cache.and_then(|c| c.get("write"))),
        })
    }

    /// The cost OpenCode reports for this message (`info.cost`), in the currency of the model's
    /// configured prices; `None` when it reports none.
    pub fn cost(&self) -> Option<f64> {
        self.extra
            .get("cost")
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn info(extra: Value) -> MessageInfo {
        let mut value = json!({"id": "msg_1", "sessionID": "ses_1", "role": "assistant"});
        value
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn tokens_and_cost_read_as_opencode_reports_them() {
        let message = info(json!({
            "tokens": {"input": 120, "output": 30, "reasoning": 7,
                       "cache": {"read": 64, "write": 2}},
            "cost": 0.0125,
        }));
        let tokens = message.tokens().unwrap();
        assert_eq!(
            tokens,
            TokenCounts {
                input: 120,
                output: 30,
                reasoning: 7,
                cache_read: 64,
                cache_write: 2
            }
        );
        assert_eq!(tokens.total(), 157);
        assert_eq!(message.cost(), Some(0.0125));
        assert_eq!(tokens.plus(tokens).total(), 314);
    }

    #[test]
    fn absent_fields_are_none_and_missing_counts_zero() {
        let bare = info(json!({}));
        assert_eq!(bare.tokens(), None);
        assert_eq!(bare.cost(), None);
        let partial = info(json!({"tokens": {"output": 5}}));
        assert_eq!(partial.tokens().unwrap().total(), 5);
    }
}
