use harness_runtime::{Live, live_agent_test};

#[live_agent_test(
    timeout = "1m30s",
    requires = ["OPENCODE_CONFIG_CONTENT", "API_KEY"],
    ignore = "needs a model",
    agent = "fixture",
    gate = ["abort", "stop"],
    isolation = "server",
    crate = "::harness_runtime",
)]
async fn every_option(live: &mut Live) -> Result<(), String> {
    let _ = live.name();
    Ok(())
}

#[live_agent_test]
async fn unit_return(_live: &mut harness_runtime::Live) {}

#[live_agent_test(isolation = "shared")]
async fn opts_into_sharing(_live: &mut Live) {}

#[live_agent_test(cassette, timeout = "600s", requires = ["TEST_OLLAMA_MODEL"])]
async fn records_and_replays(live: &mut Live) {
    assert!(live.options().cassette());
}

#[live_agent_test(gate = "before_prompt")]
async fn anyhow_return(_: &mut Live) -> anyhow::Result<()> {
    Ok(())
}

mod renamed {
    pub use harness_runtime as rt;
}

#[live_agent_test(crate = "renamed::rt")]
async fn through_a_reexport(_live: &mut Live) {}

#[test]
fn every_option_expands_and_the_functions_stay_callable() {
    // The user's function stays callable by its own name.
    let _ = every_option;
    let _ = unit_return;
    let _ = anyhow_return;
    let _ = through_a_reexport;
    let _ = opts_into_sharing;
    let _ = records_and_replays;
}
