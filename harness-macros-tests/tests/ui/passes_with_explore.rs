use harness_runtime::{Live, live_agent_test};

#[live_agent_test(requires = ["OPENCODE_CONFIG_CONTENT"], explore = 10, passes = "3 of 5")]
async fn flaky(_live: &mut Live) {}

// The model's answers (the agent's progress) beside a product and a wire point.
#[live_agent_test(explore = 10, explore_points = ["model", "product before_reply", "request GET /event"])]
async fn agent_progress(_live: &mut Live) {}

fn main() {}
