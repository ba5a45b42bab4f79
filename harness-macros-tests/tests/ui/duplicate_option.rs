use harness_runtime::{Live, live_agent_test};

#[live_agent_test(timeout = "10s", timeout = "20s")]
async fn twice(_live: &mut Live) {}

fn main() {}
