use harness_runtime::{Live, live_agent_test};

#[live_agent_test(timout = "90s")]
async fn typo(_live: &mut Live) {}

fn main() {}
