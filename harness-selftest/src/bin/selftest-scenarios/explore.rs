//! An exploring scenario (`explore = N`) that needs no agent: two tasks pass a product point
//! each at once, so every run makes one decision between them and the search is exhaustive
//! (two orderings) in well under a second. `tests/runner.rs` drives it: the settings of
//! exploration, a replay that no longer fits, and the line a passing search prints.

use std::sync::{Arc, Mutex};

use harness_runtime::prelude::*;

/// Passes whichever order the two points go in; the body checks both went once.
#[live_agent_test(
    timeout = "20s",
    explore = 4,
    explore_for = "30s",
    explore_points = ["product first", "product second"]
)]
async fn two_points_in_either_order(live: &mut Live) -> anyhow::Result<()> {
    let order = Arc::new(Mutex::new(Vec::new()));
    let pass = |name: &'static str| {
        let point = live.gates().product_point(name);
        let order = order.clone();
        async move {
            point?.pass().await;
            order.lock().unwrap().push(name);
            anyhow::Ok(())
        }
    };
    let (first, second) = tokio::join!(pass("first"), pass("second"));
    first?;
    second?;
    let mut went = order.lock().unwrap().clone();
    went.sort_unstable();
    anyhow::ensure!(went == ["first", "second"], "the points went {went:?}");
    Ok(())
}
