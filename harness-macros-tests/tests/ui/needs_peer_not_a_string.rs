use harness_runtime::{Live, live_agent_test};

#[live_agent_test(needs_peer = right)]
async fn left(_live: &mut Live) {}

#[live_agent_test]
async fn right(_live: &mut Live) {}

fn main() {}
