use harness_runtime::{Live, live_agent_test};

#[live_agent_test(agent = "fixture", agents = ["opencode-http", "qwen-code"])]
async fn text_turn(_live: &mut Live) {}

fn main() {}
