use harness_runtime::{Live, live_agent_test};

#[live_agent_test(passes = "3 of 5")]
async fn deterministic(_live: &mut Live) {}

fn main() {}
