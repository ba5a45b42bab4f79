use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = ["acp after session/prompt", "acp update tool_calls"])]
async fn misspelt_update_kind(_live: &mut Live) {}

fn main() {}
