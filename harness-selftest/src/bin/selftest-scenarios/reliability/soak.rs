//! The soak run of `tests/reliability/soak.rs`: many small scenarios in one runner, which must
//! not grow. All of them require `RELIABILITY_SOAK`, which only that test sets, so every other
//! run of this binary skips them at once.
//!
//! - `f000`..`f999`: a fixture agent, a session, one prompt through its forwarder (as a product
//!   sends it), the reply checked;
//! - `o00`..`o49`: the same on real OpenCode and the scripted model (`RELIABILITY_OPENCODE=1`);
//! - `z_held_for_the_last_sample`: last to start, it waits until the test has sampled the runner
//!   after every other one finished, so that sample sees a runner that still runs.
//!
//! Their names come from `build.rs`; each records its agent's pid, checked against its owner
//! mark, so the test can count the agents and check each is gone.

use std::time::Duration;

use harness_runtime::client::Client;
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{record_owned, released};

/// What the fixture agent answers to any prompt without faults.
const FIXTURE_REPLY: &str = "Fixture completed.";
/// What the scripted model answers real OpenCode.
const MODEL_REPLY: &str = "Soaked.";
/// How often the held scenario looks for the test's release.
const POLL: Duration = Duration::from_millis(20);

/// Records `agent` under `label`, then one turn on a new session, sent as a product sends it:
/// through the agent's forwarder (so the soak's bounds hold the forwarder too); its text must
/// be `reply`, and the forwarder must have carried the prompt.
async fn one_turn(live: &Live, agent: &Agent, label: &str, reply: &str) -> anyhow::Result<()> {
    let pid = agent.pid().ok_or_else(|| anyhow::anyhow!("no agent pid"))?;
    record_owned(label, pid, &owner_token(agent))?;
    // No directory: on a shared server the forwarder adds the agent's own.
    let product = Client::new(agent.forwarded_url(), live.redactor().clone());
    let session = product
        .create_session(&CreateSession::titled("soak"))
        .await?;
    let turn = session.prompt("hello").await?;
    anyhow::ensure!(turn.errors.is_empty(), "the turn failed: {:?}", turn.errors);
    anyhow::ensure!(turn.text == reply, "the reply was {:?}", turn.text);
    let prompts = live.wire().counters().requests;
    anyhow::ensure!(
        prompts
            .keys()
            .any(|route| route.starts_with("POST /session/{sessionID}/")),
        "the prompt did not go through the forwarder: {prompts:?}"
    );
    Ok(())
}

async fn fixture_turn(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    one_turn(live, &agent, "agent", FIXTURE_REPLY).await
}

async fn opencode_turn(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text(MODEL_REPLY));
    let agent = live.opencode().await?;
    one_turn(live, &agent, "server", MODEL_REPLY).await
}

/// `f000 f001 …` → one fixture scenario each.
macro_rules! fixture_scenarios {
    ($($name:ident)+) => {$(
        #[live_agent_test(agent = "fixture", timeout = "60s", requires = ["SELFTEST_SCRATCH", "RELIABILITY_SOAK"])]
        async fn $name(live: &mut Live) -> anyhow::Result<()> {
            fixture_turn(live).await
        }
    )+};
}

/// `o00 o01 …` → one real-OpenCode scenario each.
macro_rules! opencode_scenarios {
    ($($name:ident)+) => {$(
        #[live_agent_test(
            timeout = "240s",
            requires = ["SELFTEST_SCRATCH", "RELIABILITY_SOAK", "RELIABILITY_OPENCODE"]
        )]
        async fn $name(live: &mut Live) -> anyhow::Result<()> {
            opencode_turn(live).await
        }
    )+};
}

include!(concat!(env!("OUT_DIR"), "/soak_names.rs"));

/// Not a fixture scenario, so the runner starts it after every fixture one, and after the
/// `o` ones by name; it starts nothing.
#[live_agent_test(timeout = "600s", requires = ["SELFTEST_SCRATCH", "RELIABILITY_SOAK"])]
async fn z_held_for_the_last_sample(_live: &mut Live) -> anyhow::Result<()> {
    while !released()? {
        tokio::time::sleep(POLL).await;
    }
    Ok(())
}
