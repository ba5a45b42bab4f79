use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = "request post /session/{id}/abort")]
async fn lowercase_method(_live: &mut Live) {}

fn main() {}
