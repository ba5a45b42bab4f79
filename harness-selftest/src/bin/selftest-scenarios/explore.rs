//! Exploring scenarios (`explore = N`) that need no agent: two tasks pass a product point each
//! at once, so every run makes one decision between them and the search is exhaustive (two
//! orderings) in well under a second. `tests/runner/cli.rs` drives them: the settings of
//! exploration, a search that passes, one that finds the failing order and the line that
//! replays it, and a replay that no longer fits.

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
    let mut went = pass_together(live, ["first", "second"]).await?;
    went.sort_unstable();
    anyhow::ensure!(went == ["first", "second"], "the points went {went:?}");
    Ok(())
}

/// Fails when the abort passes before the reply. By default the held steps go in tag order:
/// `product reply #1` (tag 6498) before `product abort #1` (6bde), which passes; the search's
/// second schedule deviates (`6bde.1>6498.1`) and fails.
#[live_agent_test(
    timeout = "20s",
    explore = 4,
    explore_for = "30s",
    explore_points = ["product reply", "product abort"]
)]
async fn fails_when_the_abort_goes_first(live: &mut Live) -> anyhow::Result<()> {
    let went = pass_together(live, ["reply", "abort"]).await?;
    anyhow::ensure!(
        went == ["reply", "abort"],
        "the abort went before the reply: {went:?}"
    );
    Ok(())
}

/// Passes the product points `names` from one task each, all at once; the order they went in.
async fn pass_together(live: &Live, names: [&'static str; 2]) -> anyhow::Result<Vec<&'static str>> {
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
    let (first, second) = tokio::join!(pass(names[0]), pass(names[1]));
    first?;
    second?;
    let went = order.lock().unwrap().clone();
    Ok(went)
}
