use harness_runtime::live_agent_test;

struct Suite;

impl Suite {
    #[live_agent_test]
    async fn method(&mut self) {}
}

fn main() {}
