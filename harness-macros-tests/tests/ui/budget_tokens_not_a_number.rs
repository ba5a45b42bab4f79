use harness_runtime::{Live, live_agent_test};

#[live_agent_test(max_input_tokens = "4000")]
async fn thrifty(_live: &mut Live) {}

fn main() {}
