use harness_runtime::{Live, live_agent_test};

#[live_agent_test(max_cost = 0.0)]
async fn thrifty(_live: &mut Live) {}

fn main() {}
