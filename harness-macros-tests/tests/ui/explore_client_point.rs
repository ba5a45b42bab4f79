use harness_runtime::{Live, live_agent_test};

#[live_agent_test(explore = 20, explore_points = ["event session.idle", "abort"])]
async fn client_point(_live: &mut Live) {}

fn main() {}
