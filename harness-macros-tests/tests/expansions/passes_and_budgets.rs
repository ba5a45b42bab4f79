use harness_runtime::{Live, live_agent_test};

#[live_agent_test(cassette, passes = "3 of 5", max_tokens = 4000, max_cost = 0.05)]
async fn recorded_verdict(live: &mut Live) {
    assert_eq!(live.options().passes(), Some((3, 5)));
}

#[live_agent_test(requires = ["OPENCODE_CONFIG_CONTENT"], passes = "1 of 1")]
async fn live_verdict(_live: &mut Live) {}

#[live_agent_test(
    max_tokens = 4000,
    max_input_tokens = 3000,
    max_output_tokens = 800,
    max_reasoning_tokens = 200,
    max_cost = "0.5",
    max_first_token = "2s",
    max_turn = "1m30s"
)]
async fn scripted_budget(live: &mut Live) {
    let options = live.options();
    assert_eq!(options.max_cost(), Some(0.5));
    assert_eq!(options.max_tokens(), Some(4000));
    assert_eq!(options.max_turn(), Some(std::time::Duration::from_secs(90)));
}

#[live_agent_test(max_cost = 1)]
async fn whole_cost(_live: &mut Live) {}

#[test]
fn passes_and_budgets_expand_and_the_functions_stay_callable() {
    let _ = recorded_verdict;
    let _ = live_verdict;
    let _ = scripted_budget;
    let _ = whole_cost;
}
