//! What a model request's answer reported spending, read from the recorded answer in its own
//! API ([`apis::usage`]), and priced as OpenCode prices it: by the model's `cost` in the user's
//! config (per million tokens), which the cassette keeps in `recorded.model_entry`.

use serde_json::Value;

use super::apis;
use super::format::{Interaction, Recorded, RecordedResponse};
use crate::client::TokenCounts;

/// The tokens `interaction`'s answer reported (a stream's usage frames, or a whole body's),
/// and their cost when `recorded`'s model entry prices the model; `None` when it reported none
/// (an error, a dropped request, a stream without usage).
pub(crate) fn request_usage(
    interaction: &Interaction,
    recorded: &Recorded,
) -> Option<(TokenCounts, Option<f64>)> {
    let api = interaction.request.api;
    let tokens = match &interaction.response {
        RecordedResponse::Stream { chunks, .. } => {
            apis::usage(api, chunks.iter().map(|chunk| &chunk.data))
        }
        RecordedResponse::Body { status, body, .. } if (200..300).contains(status) => {
            apis::usage(api, [body])
        }
        RecordedResponse::Body { .. } | RecordedResponse::Dropped { .. } => None,
    }?;
    Some((tokens, cost(&tokens, &recorded.model_entry)))
}

/// The cost of `tokens` at `model_entry`'s prices (`cost.input`, `cost.output`,
/// `cost.cache_read`, `cost.cache_write`, per million tokens; reasoning at the output price, as
/// OpenCode counts it); `None` when the entry names no prices.
pub(crate) fn cost(tokens: &TokenCounts, model_entry: &Value) -> Option<f64> {
    let prices = model_entry.get("cost").filter(|c| c.is_object())?;
    let price = |key: &str| prices.get(key).and_then(Value::as_f64).unwrap_or(0.0);
    let spent = tokens.input as f64 * price("input")
        + (tokens.output + tokens.reasoning) as f64 * price("output")
        + tokens.cache_read as f64 * price("cache_read")
        + tokens.cache_write as f64 * price("cache_write");
    Some(spent / 1_000_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_priced_model_costs_its_tokens_per_million() {
        let tokens = TokenCounts {
            input: 1_000,
            output: 200,
            reasoning: 100,
            cache_read: 10_000,
            cache_write: 2_000,
        };
        let entry = json!({"cost": {"input": 3.0, "output": 15.0, "cache_read": 0.3,
                                    "cache_write": 3.75}});
        let expected = (1_000.0 * 3.0 + 300.0 * 15.0 + 10_000.0 * 0.3 + 2_000.0 * 3.75) / 1e6;
        let got = cost(&tokens, &entry).unwrap();
        assert!((got - expected).abs() < 1e-12, "{got} != {expected}");
        assert_eq!(cost(&tokens, &json!({"tool_call": true})), None);
    }
}
