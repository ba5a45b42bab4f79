use harness_runtime::{Live, live_agent_test};

#[live_agent_test(timeout = "60s", explore_for = "5m")]
async fn budget_without_exploring(_live: &mut Live) {}

fn main() {}
