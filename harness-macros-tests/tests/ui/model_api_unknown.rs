use harness_runtime::{Live, live_agent_test};

#[live_agent_test(model_api = "claude")]
async fn unknown_api(_live: &mut Live) {}

fn main() {}
