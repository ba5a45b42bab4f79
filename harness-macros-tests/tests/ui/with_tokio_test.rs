use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
#[tokio::test]
async fn also_tokio(_live: &mut Live) {}

fn main() {}
