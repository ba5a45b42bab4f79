use harness_runtime::live_agent_test;

#[live_agent_test]
async fn no_argument() {}

fn main() {}
