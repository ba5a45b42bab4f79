use harness_runtime::{Live, live_agent_test};

#[live_agent_test(requires = "API_KEY")]
async fn single(_live: &mut Live) {}

fn main() {}
