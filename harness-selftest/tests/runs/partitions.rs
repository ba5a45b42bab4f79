//! Scale-out: the live suite sharded across machines with nextest's `--partition`.
//! Two partitions together must run every scenario exactly once, for both partitioning kinds.
//!
//! `cargo nextest list --partition … --message-format json` reports, per test, whether the
//! partition selected it (`filter-match: matches`) or not (`mismatch`, reason `partition`):
//! exactly the set `cargo nextest run` with the same arguments runs. The nested cargo selects
//! the same packages and profile as `cargo test --workspace`, so it reuses the built binaries.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use harness_selftest::prerequisites::{self, Prerequisite::Nextest, Test};
use harness_selftest::test;

/// Every test of the suite per binary, as `name → selected`.
type Listing = BTreeMap<String, BTreeMap<String, bool>>;

pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(two_partitions_run_every_scenario_exactly_once).needs(Nextest),
        test!(nextest_lists_the_scenarios_that_need_a_peer_as_ignored).needs(Nextest),
        test!(a_test_without_nextest_is_skipped_and_fails_under_ci_or_strict),
    ]
}

/// Cargo, in the workspace's root.
fn cargo() -> Command {
    let mut command = prerequisites::cargo();
    command.current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
    command
}

/// `cargo nextest list` of the live suites (every scenario, ignored ones included) with `extra`
/// arguments, as nextest's JSON.
fn nextest_list(extra: &[&str]) -> serde_json::Value {
    let output = cargo()
        .args([
            "nextest",
            "list",
            "--workspace",
            "--test",
            "live",
            "--run-ignored",
            "all",
            "--message-format",
            "json",
        ])
        .args(extra)
        .output()
        .expect("run cargo nextest list");
    assert!(
        output.status.success(),
        "cargo nextest list {extra:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("nextest's JSON list")
}

/// Every test of the live suites and whether `partition` (none: the whole list) selects it.
fn list(partition: Option<&str>) -> Listing {
    let extra = partition
        .map(|p| vec!["--partition", p])
        .unwrap_or_default();
    let json = nextest_list(&extra);
    let suites = json["rust-suites"].as_object().expect("rust-suites");
    suites
        .iter()
        .map(|(binary, suite)| {
            let cases = suite["testcases"].as_object().expect("testcases");
            let selected = cases
                .iter()
                .map(|(name, case)| {
                    let status = case["filter-match"]["status"].as_str().unwrap_or_default();
                    (name.clone(), status == "matches")
                })
                .collect();
            (binary.clone(), selected)
        })
        .collect()
}

fn two_partitions_run_every_scenario_exactly_once() {
    let all = list(None);
    let suite = all
        .get("live-agent-suite::live")
        .expect("the live suite is listed");
    assert!(suite.len() > 10, "too few scenarios listed: {suite:?}");
    assert!(
        suite.values().all(|selected| *selected),
        "an unpartitioned list left scenarios out: {suite:?}"
    );
    for kind in ["count", "hash"] {
        let first = list(Some(&format!("{kind}:1/2")));
        let second = list(Some(&format!("{kind}:2/2")));
        for (binary, tests) in &all {
            for name in tests.keys() {
                let runs = [&first, &second]
                    .iter()
                    .filter(|listing| listing[binary][name])
                    .count();
                assert_eq!(
                    runs, 1,
                    "{binary} {name} runs in {runs} of the two {kind} partitions"
                );
            }
            assert_eq!(
                first[binary].len(),
                tests.len(),
                "{kind}:1/2 lists other tests"
            );
            assert_eq!(
                second[binary].len(),
                tests.len(),
                "{kind}:2/2 lists other tests"
            );
        }
        // Both halves hold work: a partitioning that put everything in one shard proves nothing.
        let half = |listing: &Listing| {
            listing["live-agent-suite::live"]
                .values()
                .filter(|s| **s)
                .count()
        };
        assert!(
            half(&first) > 0 && half(&second) > 0,
            "{kind}: an empty partition"
        );
    }
}

/// nextest itself (its variables at list time, its `--list --ignored` pass): the two scenarios
/// that meet a peer in their process are ignored, the others not (`needs_peer`).
fn nextest_lists_the_scenarios_that_need_a_peer_as_ignored() {
    let json = nextest_list(&[]);
    let cases = json["rust-suites"]["live-agent-suite::live"]["testcases"]
        .as_object()
        .expect("the live suite's test cases");
    let ignored = |name: &str| cases.get(name).map(|case| case["ignored"] == true);
    for peer in [
        "provisioning::parallel_isolation_left",
        "provisioning::parallel_isolation_right",
    ] {
        assert_eq!(ignored(peer), Some(true), "{peer}");
    }
    // A scripted scenario that requires nothing is not.
    assert_eq!(ignored("turns::plain_text_reply"), Some(false));
}

/// Where cargo-nextest is missing (here: neither `PATH` nor `CARGO_HOME` holds it), the sharding
/// test is skipped with the reason, flagged ignored when listed (for nextest), and failed under
/// `CI` or `LIVE_STRICT=1`, without running.
fn a_test_without_nextest_is_skipped_and_fails_under_ci_or_strict() {
    let empty = tempfile::tempdir().unwrap();
    prerequisites::assert_skipped_without(
        "partitions::two_partitions_run_every_scenario_exactly_once",
        "cargo-nextest is not installed: install it with `cargo install cargo-nextest --locked`",
        |command| {
            command
                .env("PATH", empty.path())
                .env("CARGO_HOME", empty.path());
        },
    );
}
