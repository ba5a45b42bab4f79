use harness_runtime::{Live, live_agent_test};

#[live_agent_test(agent = "fixture", cassette)]
async fn fixture_cassette(_live: &mut Live) {}

fn main() {}
