use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
#[test]
async fn also_a_test(_live: &mut Live) {}

fn main() {}
