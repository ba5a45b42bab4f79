use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = ["abort", "before_abort"])]
async fn gate_typo(_live: &mut Live) {}

fn main() {}
