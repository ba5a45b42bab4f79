//! `cassette` scenarios with budgets, run against a scripted upstream (live or recorded) and
//! replayed, for `tests/runs/budgets.rs`: one turn each, whose answer the upstream scripts by the
//! prompt (`harness_selftest::budgets` holds both sides' cases). Each passes its body; its budget
//! is what fails it, from the usage and timing of the model it talked to, or of its cassette.
//!
//! Name order is run order under `--test-threads 1`: `first_token_slow` (slow to its first
//! token and slow as a turn) spends little,
//! `over_tokens` spends past `LIVE_RUN_MAX_TOKENS`, `then_not_started` is kept from starting.
//!
//! They require `LIVE_CASSETTE_DIR` (no run writes into the checkout) and `SELFTEST_SCRATCH`,
//! as every scenario a test drives.

use harness_runtime::prelude::*;
use harness_selftest::budgets as case;

/// One turn of `text`, which must end without an error.
async fn one_turn(live: &mut Live, text: &str) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt(text).await?;
    if let Some(error) = turn.error() {
        anyhow::bail!("the turn ended with an error: {error:?}");
    }
    Ok(())
}

#[live_agent_test(cassette, timeout = "180s", max_first_token = "300ms", max_turn = "2s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn first_token_slow(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::SLOW_FIRST_TOKEN).await
}

#[live_agent_test(cassette, timeout = "180s", max_tokens = 500, max_output_tokens = 100, max_cost = 0.005, requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn over_tokens(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::OVER_TOKENS).await
}

#[live_agent_test(cassette, timeout = "180s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn then_not_started(live: &mut Live) -> anyhow::Result<()> {
    one_turn(live, case::NOT_STARTED).await
}
