//! The cases of the budgets proof, shared by both sides: what each `budgets::` scenario of
//! `selftest-scenarios` asks, and how the scripted upstream of `tests/runs/budgets.rs` answers it
//! (by the last user text) while the scenarios run live or are recorded.

use std::time::Duration;

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};

/// A turn whose answer reports many tokens ([`TOKENS_SPENT`]), more than its `max_tokens`.
pub const OVER_TOKENS: &str = "Budgets: spend many tokens";
/// A turn whose answer's first token comes after [`FIRST_TOKEN_DELAY`].
pub const SLOW_FIRST_TOKEN: &str = "Budgets: take your time";
/// A turn the run's ceiling keeps from starting.
pub const NOT_STARTED: &str = "Budgets: never asked";

/// The usage the upstream reports for [`OVER_TOKENS`]: input, output.
pub const TOKENS_SPENT: (u64, u64) = (900, 80);
/// How long the upstream waits before each chunk after its first (the role-only one), so the
/// first token of [`SLOW_FIRST_TOKEN`] comes no sooner, and its turn takes at least
/// [`SLOW_CHUNKS`] times as long.
pub const FIRST_TOKEN_DELAY: Duration = Duration::from_millis(700);
/// The chunks [`SLOW_FIRST_TOKEN`]'s answer waits before: its text, its finish, `[DONE]`.
pub const SLOW_CHUNKS: u32 = 3;
/// The model's configured prices (per million tokens, input and output): OpenCode reports
/// `(900 + 80) × 10 / 1e6 = 0.0098` for [`OVER_TOKENS`].
pub const PRICE_PER_MILLION: f64 = 10.0;

/// Scripts `model` as the upstream of every case.
pub fn script_upstream(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    let (input, output) = TOKENS_SPENT;
    model
        .rule(
            Rule::when(asks(OVER_TOKENS))
                .reply(Reply::text("A long and costly answer.").with_usage(input, output)),
        )
        .rule(
            Rule::when(asks(SLOW_FIRST_TOKEN))
                .reply(Reply::text("A slow answer.").slow(FIRST_TOKEN_DELAY)),
        )
        .rule(Rule::when(asks(NOT_STARTED)).reply(Reply::text("Never sent.")));
}
