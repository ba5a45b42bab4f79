use harness_runtime::{Live, live_agent_test};

#[live_agent_test(needs_peer = "")]
async fn left(_live: &mut Live) {}

fn main() {}
