use harness_runtime::{Live, live_agent_test};

#[live_agent_test(ignore)]
async fn no_reason(_live: &mut Live) {}

fn main() {}
