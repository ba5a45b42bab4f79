//! `cassette` scenarios with `passes = "K of N"`, for `tests/runs/verdicts.rs`: one turn each,
//! passing when the model said the right word. Against the scripted upstream of the test (a "real"
//! model that answers in a known pattern) they run until their verdict is decided; replayed from
//! a cassette they run once.
//!
//! They require `LIVE_CASSETTE_DIR` (no run writes into the checkout) and `SELFTEST_SCRATCH`,
//! as every scenario a test drives.

use harness_runtime::prelude::*;
use harness_selftest::verdicts::{self as case, RIGHT};

/// One turn of `prompt`: passes when the answer is the right word.
async fn say_the_word(live: &mut Live, prompt: &str) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt(prompt).await?;
    anyhow::ensure!(
        turn.text.trim() == RIGHT,
        "the model said {:?}, not the right word",
        turn.text.trim()
    );
    Ok(())
}

#[live_agent_test(cassette, passes = "3 of 5", timeout = "120s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn three_of_five(live: &mut Live) -> anyhow::Result<()> {
    say_the_word(live, case::THREE_OF_FIVE).await
}

#[live_agent_test(cassette, passes = "3 of 4", timeout = "120s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn three_of_four(live: &mut Live) -> anyhow::Result<()> {
    say_the_word(live, case::THREE_OF_FOUR).await
}
