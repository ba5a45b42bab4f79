use harness_runtime::{Live, live_agent_test};

#[live_agent_test(timeout = 90)]
async fn bare_number(_live: &mut Live) {}

fn main() {}
