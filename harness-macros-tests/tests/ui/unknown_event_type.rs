use harness_runtime::{Live, live_agent_test};

#[live_agent_test(gate = ["event permission.asked", "event session.iddle"])]
async fn event_typo(_live: &mut Live) {}

fn main() {}
