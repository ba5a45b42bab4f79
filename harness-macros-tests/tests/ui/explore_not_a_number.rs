use harness_runtime::{Live, live_agent_test};

#[live_agent_test(explore = "x")]
async fn budget_in_a_string(_live: &mut Live) {}

fn main() {}
