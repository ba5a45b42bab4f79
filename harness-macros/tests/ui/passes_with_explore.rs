use harness_runtime::{Live, live_agent_test};

#[live_agent_test(requires = ["OPENCODE_CONFIG_CONTENT"], explore = 10, passes = "3 of 5")]
async fn flaky(_live: &mut Live) {}

fn main() {}
