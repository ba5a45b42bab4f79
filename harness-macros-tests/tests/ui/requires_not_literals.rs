use harness_runtime::{Live, live_agent_test};

#[live_agent_test(requires = ["API_KEY", API_URL])]
async fn identifier(_live: &mut Live) {}

fn main() {}
