use harness_runtime::{Live, live_agent_test};

#[live_agent_test(agents = ["opencode-http", "claude-code"])]
async fn text_turn(_live: &mut Live) {}

fn main() {}
