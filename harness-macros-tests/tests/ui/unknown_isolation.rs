use harness_runtime::{Live, live_agent_test};

#[live_agent_test(isolation = "process")]
async fn bad_isolation(_live: &mut Live) {}

fn main() {}
