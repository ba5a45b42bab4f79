use std::time::Duration;

use harness_runtime::{Live, live_agent_test};

#[live_agent_test(
    agent = "fixture",
    explore = 200,
    explore_for = "2m",
    explore_points = [
        "request POST /permission/{id}/reply",
        "response POST /session/{id}/abort",
        "event session.idle",
        "product before_reply",
    ],
)]
async fn every_explore_option(live: &mut Live) {
    let options = live.options();
    assert_eq!(options.explore(), Some(200));
    assert_eq!(options.explore_for(), Some(Duration::from_secs(120)));
    assert_eq!(options.explore_points().len(), 4);
}

#[live_agent_test(explore = 1, explore_points = "event session.idle")]
async fn one_point(_live: &mut Live) {}

#[live_agent_test(explore = 100000)]
async fn defaults(live: &mut Live) {
    let options = live.options();
    assert_eq!(options.explore(), Some(100000));
    assert_eq!(options.explore_for(), None);
    assert!(options.explore_points().is_empty());
}

#[test]
fn the_explore_options_expand_and_the_functions_stay_callable() {
    let _ = every_explore_option;
    let _ = one_point;
    let _ = defaults;
}
