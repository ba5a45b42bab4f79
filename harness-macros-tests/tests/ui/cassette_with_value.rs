use harness_runtime::{Live, live_agent_test};

#[live_agent_test(cassette = true)]
async fn valued_flag(_live: &mut Live) {}

fn main() {}
