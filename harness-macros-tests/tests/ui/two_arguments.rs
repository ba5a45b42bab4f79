use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
async fn two_arguments(_live: &mut Live, _extra: u32) {}

fn main() {}
