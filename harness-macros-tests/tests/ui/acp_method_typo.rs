use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = "acp before session/promt")]
async fn misspelt_method(_live: &mut Live) {}

fn main() {}
