use harness_runtime::{Live, live_agent_test};

#[live_agent_test(max_first_token = 2)]
async fn quick(_live: &mut Live) {}

fn main() {}
