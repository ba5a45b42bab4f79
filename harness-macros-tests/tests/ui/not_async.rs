use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
fn not_async(_live: &mut Live) {}

fn main() {}
