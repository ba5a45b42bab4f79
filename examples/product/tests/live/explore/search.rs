//! The race searched: every ordering of its four decision points for the correct product, a
//! random search over all of the correct product's traffic, and the racy product under that
//! search (ignored: it is meant to fail; [`super::proof`] runs it).

use harness_runtime::prelude::*;

use super::stop_at_reply;

/// Every ordering of the race's four decision points (the product's two points and its two
/// requests), for the correct product: none lets a reply reach the agent after the abort, and
/// every one ends with the same report (the snapshot).
#[live_agent_test(
    timeout = "60s",
    explore = 50,
    explore_points = [
        "product before_reply",
        "product before_abort",
        "request POST /permission/{requestID}/reply",
        "request POST /session/{id}/abort",
    ]
)]
async fn every_ordering_of_the_race_keeps_the_invariant(live: &mut Live) -> anyhow::Result<()> {
    stop_at_reply(live, false).await
}

/// The correct product with every request, response, session event and product point a
/// decision point: a space far larger than the budget, searched at random.
#[live_agent_test(timeout = "60s", explore = 8)]
async fn explored_orderings_of_all_traffic_keep_the_invariant(
    live: &mut Live,
) -> anyhow::Result<()> {
    stop_at_reply(live, false).await
}

// The racy product under the same random search, twenty times over (see `racy_searches!`).
racy_searches!(
    stop_at_reply;
    racy_01, racy_02, racy_03, racy_04, racy_05, racy_06, racy_07, racy_08, racy_09, racy_10,
    racy_11, racy_12, racy_13, racy_14, racy_15, racy_16, racy_17, racy_18, racy_19, racy_20,
);
