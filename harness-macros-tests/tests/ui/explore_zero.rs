use harness_runtime::{Live, live_agent_test};

#[live_agent_test(explore = 0)]
async fn no_budget(_live: &mut Live) {}

fn main() {}
