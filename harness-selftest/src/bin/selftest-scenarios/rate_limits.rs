//! Rate limits, for `tests/runs/rate_limits.rs` (`harness_selftest::rate_limits` holds both sides'
//! cases): a recording whose upstream answers 429 once, and one it always rate-limits; a live
//! turn through the relay after a 429; and timing scenarios, live-model and scripted, that write
//! when their body started and ended, for the cap of `LIVE_MODEL_CONCURRENCY` measured.
//!
//! The timing ones hold their slot or thread without starting OpenCode: the cap is decided by
//! the model plan, before any agent. Everything requires a variable only the test sets.

use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use harness_runtime::prelude::*;
use harness_selftest::rate_limits::{self as case, TIMES_DIR};

/// One turn of `prompt`, which must be answered with the upstream's text.
async fn answered_turn(live: &mut Live, prompt: &str) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt(prompt).await?;
    anyhow::ensure!(
        turn.text.contains(case::ANSWER),
        "the turn was not answered: text {:?}, errors {:?}",
        turn.text,
        turn.errors
    );
    Ok(())
}

/// Writes when the body that started at `start` ended, under `SELFTEST_TIMES_DIR`.
fn done(live: &Live, start: SystemTime) -> anyhow::Result<()> {
    let dir = PathBuf::from(std::env::var_os(TIMES_DIR).expect("required"));
    let function = live.name().rsplit("::").next().unwrap_or_default();
    case::write_times(&dir, function, start, SystemTime::now());
    Ok(())
}

/// Holds the body's slot (live-model) or thread (scripted) for `how_long`.
async fn hold(live: &Live, how_long: Duration) -> anyhow::Result<()> {
    let start = SystemTime::now();
    tokio::time::sleep(how_long).await;
    done(live, start)
}

#[live_agent_test(cassette, timeout = "120s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn recorded_after_a_429(live: &mut Live) -> anyhow::Result<()> {
    answered_turn(live, case::RECORDED_AFTER_429).await
}

#[live_agent_test(cassette, timeout = "120s", requires = ["SELFTEST_SCRATCH", "LIVE_CASSETTE_DIR"])]
async fn always_rate_limited(live: &mut Live) -> anyhow::Result<()> {
    answered_turn(live, case::ALWAYS_429).await
}

#[live_agent_test(timeout = "120s", requires = ["SELFTEST_SCRATCH", "SELFTEST_TIMES_DIR", "OPENCODE_CONFIG_CONTENT", "TEST_OLLAMA_MODEL"])]
async fn live_turn_after_a_429(live: &mut Live) -> anyhow::Result<()> {
    let start = SystemTime::now();
    answered_turn(live, case::LIVE_AFTER_429).await?;
    done(live, start)
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR", "OPENCODE_CONFIG_CONTENT"])]
async fn live_hold_a(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::LIVE_HOLD).await
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR", "OPENCODE_CONFIG_CONTENT"])]
async fn live_hold_b(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::LIVE_HOLD).await
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR"])]
async fn scripted_hold_1(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::SCRIPTED_HOLD).await
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR"])]
async fn scripted_hold_2(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::SCRIPTED_HOLD).await
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR"])]
async fn scripted_hold_3(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::SCRIPTED_HOLD).await
}

#[live_agent_test(timeout = "60s", requires = ["SELFTEST_TIMES_DIR"])]
async fn scripted_hold_4(live: &mut Live) -> anyhow::Result<()> {
    hold(live, case::SCRIPTED_HOLD).await
}
