use harness_runtime::{Live, live_agent_test};

#[live_agent_test(timeout = "90 seconds")]
async fn malformed(_live: &mut Live) {}

fn main() {}
