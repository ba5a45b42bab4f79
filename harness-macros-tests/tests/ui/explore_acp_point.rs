use harness_runtime::{Live, live_agent_test};

#[live_agent_test(explore = 20, explore_points = ["acp update tool_call"])]
async fn acp_point(_live: &mut Live) {}

fn main() {}
