use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = ["event session.idle", "product before_save", "event session.idle"])]
async fn listed_twice(_live: &mut Live) {}

fn main() {}
