use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
async fn shared_borrow(_live: &Live) {}

fn main() {}
