use harness_runtime::{Live, live_agent_test};

#[live_agent_test(explore = 20, explore_points = "request POST /permission/{id}/rply")]
async fn route_typo(_live: &mut Live) {}

fn main() {}
