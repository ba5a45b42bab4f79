use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
async fn generic<T>(_live: &mut Live) {}

fn main() {}
