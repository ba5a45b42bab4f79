use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = "response POST /permission/{permission}/reply")]
async fn placeholder_typo(_live: &mut Live) {}

fn main() {}
