use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = "product Before Save")]
async fn product_name(_live: &mut Live) {}

fn main() {}
