use harness_runtime::{Live, live_agent_test};

#[live_agent_test]
async fn returns_a_number(live: &mut Live) -> u32 {
    let _ = live;
    7
}

fn main() {}
