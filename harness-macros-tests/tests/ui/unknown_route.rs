use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = ["abort", "request POST /session/{id}/abrt"])]
async fn route_typo(_live: &mut Live) {}

fn main() {}
