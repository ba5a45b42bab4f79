//! What nextest is told, with nextest's environment set as it sets it (`NEXTEST_EXECUTION_MODE`,
//! `NEXTEST_RUN_ID`) on the `selftest-scenarios` binary: a scenario that needs a peer in its
//! process is listed ignored there with its reason and, run anyway, skips at once; a run-time
//! skip prints `LIVE SKIPPED`, lands in the run report and ends with the run's skips so far;
//! `LIVE_NEXTEST_SKIP=fail` fails it. Without nextest's environment nothing of this shows.

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_selftest::run::{Finished, Running};
use harness_selftest::sandbox::scrubbed_command;

const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");

/// nextest's mark of a process that runs (or lists) one test of its own.
const PROCESS_PER_TEST: (&str, &str) = ("NEXTEST_EXECUTION_MODE", "process-per-test");
/// Lets the `peers::` scenarios run (a whole run of the binary lists them ignored).
const PEERS: (&str, &str) = ("SELFTEST_PEERS", "1");
/// Why a peer scenario cannot run under nextest, as the runner says it.
const NO_PEER_UNDER_NEXTEST: &str = "needs its peer scenario `peers::right` running in the same \
     process, and nextest runs every test in a process of its own; run it with `cargo test`";
/// The reason `run_skips::skips_with_reason` gives.
const PROSE: &str = "the model answered in prose instead of calling the tool";
/// Well under a peer scenario's own wait for the other (60 s): a run this short did not wait.
/// (A run that did would also say `started` and skip for another reason.)
const UNDER_ITS_OWN_WAIT: Duration = Duration::from_secs(45);

/// Runs the binary with `args` and `env`. None of the scenarios run starts an agent: servers of
/// their own keep the runner from warming a shared one they would never lease (seconds each).
fn run(args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut command = scrubbed_command(SCENARIOS, args);
    command.env("LIVE_ISOLATION", "server");
    command.envs(env.iter().copied());
    Running::start(command).wait(scaled(Duration::from_secs(120)))
}

fn names(run: &Finished) -> Vec<&str> {
    run.stdout_lines()
        .into_iter()
        .filter_map(|line| line.strip_suffix(": test"))
        .collect()
}

#[test]
fn peer_scenarios_are_listed_ignored_with_the_reason_only_under_nextest() {
    let peers = ["peers::left", "peers::right"];
    // Without nextest: listed, and not among the ignored.
    let all = run(&["--list", "--format", "terse"], &[PEERS]);
    all.assert_code(0);
    assert!(peers.iter().all(|p| names(&all).contains(p)), "\n{all}");
    let ignored = run(&["--list", "--format", "terse", "--ignored"], &[PEERS]);
    ignored.assert_code(0);
    assert!(
        peers.iter().all(|p| !names(&ignored).contains(p)),
        "\n{ignored}"
    );
    assert!(!ignored.stderr.contains("listed ignored"), "\n{ignored}");

    // Under nextest: still listed, now among the ignored, and stdout still holds only the list.
    let all = run(&["--list", "--format", "terse"], &[PEERS, PROCESS_PER_TEST]);
    all.assert_code(0);
    assert!(peers.iter().all(|p| names(&all).contains(p)), "\n{all}");
    let ignored = run(
        &["--list", "--format", "terse", "--ignored"],
        &[PEERS, PROCESS_PER_TEST],
    );
    ignored.assert_code(0).assert_stderr(&format!(
        "[live] peers::left: listed ignored: {NO_PEER_UNDER_NEXTEST}"
    ));
    assert!(
        peers.iter().all(|p| names(&ignored).contains(p)),
        "\n{ignored}"
    );
    assert!(
        ignored.stdout_lines().iter().all(|l| l.ends_with(": test")),
        "\n{ignored}"
    );
}

/// nextest runs a test as `--exact <name> --nocapture` (`--ignored` added under
/// `--run-ignored`): a peer scenario then skips before its body, which would wait 60 s.
#[test]
fn a_peer_scenario_run_under_nextest_skips_at_once() {
    for extra in [&[][..], &["--ignored"]] {
        let mut args = vec!["--exact", "peers::left", "--nocapture"];
        args.extend_from_slice(extra);
        let run = run(&args, &[PEERS, PROCESS_PER_TEST]);
        run.assert_code(0)
            .assert_result("peers::left", "ignored")
            .assert_stderr(&format!(
                "LIVE SKIPPED peers::left: {NO_PEER_UNDER_NEXTEST}"
            ));
        assert!(!run.stderr.contains("peers::left: started"), "\n{run}");
        assert!(run.elapsed < UNDER_ITS_OWN_WAIT, "{:?}\n{run}", run.elapsed);
    }
}

/// Under `cargo test` the pair meets; a filter that leaves the peer out skips at once.
#[test]
fn under_cargo_test_the_peers_meet_and_one_alone_skips_at_once() {
    let both = run(&["peers::", "--test-threads", "2"], &[PEERS]);
    both.assert_code(0)
        .assert_result("peers::left", "ok")
        .assert_result("peers::right", "ok");
    assert!(!both.stderr.contains("LIVE SKIPPED"), "\n{both}");
    let alone = run(&["--exact", "peers::left"], &[PEERS]);
    alone
        .assert_code(0)
        .assert_result("peers::left", "ignored")
        .assert_stdout("the filters leave `peers::right` out of this run");
    assert!(!alone.stderr.contains("LIVE SKIPPED"), "\n{alone}");
    assert!(!alone.stderr.contains("peers::left: started"), "\n{alone}");
    assert!(
        alone.elapsed < UNDER_ITS_OWN_WAIT,
        "{:?}\n{alone}",
        alone.elapsed
    );
}

/// The scenario's record in the run report: its outcome and reason.
fn record(report: &Path, run_id: &str, file: &str) -> serde_json::Value {
    let path = report.join("runs").join(run_id).join(file);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("no record at {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_run_time_skip_under_nextest_is_said_reported_and_summed_up_across_processes() {
    let report = tempfile::tempdir().unwrap();
    let report_dir = report.path().to_str().unwrap();
    let run_id = "5f0c8a52-6a1e-4d2b-9c3e-0123456789ab";
    let nextest = [
        PROCESS_PER_TEST,
        ("NEXTEST_RUN_ID", run_id),
        ("LIVE_REPORT", report_dir),
        PEERS,
    ];
    let first = run(
        &["--exact", "run_skips::skips_with_reason", "--nocapture"],
        &nextest,
    );
    first
        .assert_code(0)
        .assert_stderr(&format!(
            "LIVE SKIPPED run_skips::skips_with_reason: {PROSE}"
        ))
        .assert_stderr(
            "LIVE SKIPPED so far in this nextest run: 1 (nextest counts it as passed; the run \
             report gives each reason): run_skips::skips_with_reason",
        );
    let skipped = record(report.path(), run_id, "1-run_skips__skips_with_reason.json");
    assert_eq!(skipped["outcome"], "skipped", "{skipped}");
    assert_eq!(skipped["reason"], PROSE, "{skipped}");

    // A second process of the same run: its line names both.
    let second = run(&["--exact", "peers::left", "--nocapture"], &nextest);
    second.assert_code(0).assert_stderr(
        "LIVE SKIPPED so far in this nextest run: 2 (nextest counts them as passed; the run \
         report gives each reason): peers::left, run_skips::skips_with_reason",
    );
    let peer = record(report.path(), run_id, "1-peers__left.json");
    assert_eq!(peer["reason"], NO_PEER_UNDER_NEXTEST, "{peer}");

    // A passing process says nothing of skips.
    let passing = run(&["--exact", "outcomes::passes", "--nocapture"], &nextest);
    passing.assert_code(0);
    assert!(!passing.stderr.contains("LIVE SKIPPED"), "\n{passing}");

    // Without nextest's environment: libtest's `ignored` alone, as before.
    let plain = run(&["--exact", "run_skips::skips_with_reason"], &[]);
    plain
        .assert_code(0)
        .assert_result("run_skips::skips_with_reason", "ignored");
    assert!(!plain.stderr.contains("LIVE SKIPPED"), "\n{plain}");
}

#[test]
fn live_nextest_skip_fail_makes_a_run_time_skip_a_failure() {
    let run_skip = |value: &str| {
        run(
            &["--exact", "run_skips::skips_with_reason", "--nocapture"],
            &[PROCESS_PER_TEST, ("LIVE_NEXTEST_SKIP", value)],
        )
    };
    run_skip("fail")
        .assert_code(101)
        .assert_result("run_skips::skips_with_reason", "FAILED")
        .assert_stderr(&format!(
            "LIVE SKIPPED run_skips::skips_with_reason: {PROSE}"
        ))
        .assert_stdout(&format!(
            "skipped at run time: {PROSE} (LIVE_NEXTEST_SKIP=fail makes a run-time skip a \
             failure under nextest, which would count it as passed)"
        ));
    run_skip("pass").assert_code(0);
    run_skip("no")
        .assert_code(2)
        .assert_stderr("error: LIVE_NEXTEST_SKIP must be `pass`");
}
