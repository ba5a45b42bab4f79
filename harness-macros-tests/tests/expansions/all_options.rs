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

#[live_agent_test(agents = ["opencode-http", "opencode-acp", "qwen-code"])]
async fn on_every_agent(live: &mut Live) {
    // Each registration knows the agent it runs on.
    let _ = live.any_agent_kind();
}

/// `agents` registers one scenario per agent, named after it, each with its kind.
#[test]
fn agents_register_one_scenario_per_agent() {
    use harness_runtime::any_agent::AnyAgentKind;
    let mut found: Vec<(String, Option<AnyAgentKind>)> =
        harness_runtime::__private::Scenario::all()
            .into_iter()
            .filter(|s| s.function.starts_with("on_every_agent"))
            .map(|s| (s.name(), s.options.any_agent))
            .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        found,
        [
            (
                "all_options::on_every_agent::opencode_acp".to_string(),
                Some(AnyAgentKind::OpenCodeAcp)
            ),
            (
                "all_options::on_every_agent::opencode_http".to_string(),
                Some(AnyAgentKind::OpenCodeHttp)
            ),
            (
                "all_options::on_every_agent::qwen_code".to_string(),
                Some(AnyAgentKind::QwenCode)
            ),
        ]
    );
}

#[test]
fn every_option_expands_and_the_functions_stay_callable() {
    // The user's function stays callable by its own name.
    let _ = every_option;
    let _ = unit_return;
    let _ = anyhow_return;
    let _ = through_a_reexport;
    let _ = opts_into_sharing;
    let _ = records_and_replays;
    let _ = on_every_agent;
}
