//! Two scenarios that meet inside one runner process, each naming the other.

use harness_runtime::{Live, live_agent_test};

#[live_agent_test(needs_peer = "right", timeout = "60s")]
async fn left(_live: &mut Live) {}

#[live_agent_test(needs_peer = "left")]
async fn right(_live: &mut Live) -> Result<(), String> {
    Ok(())
}

/// The module compiling is the test: each peer's existence check found the other.
#[test]
fn peers_naming_each_other_expand() {
    let _ = left;
    let _ = right;
}
