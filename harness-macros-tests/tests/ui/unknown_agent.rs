use harness_runtime::{Live, live_agent_test};

#[live_agent_test(agent = "claude")]
async fn other_agent(_live: &mut Live) {}

fn main() {}
