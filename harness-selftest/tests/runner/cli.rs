//! Runs the `selftest-scenarios` binary as a child, the way `cargo test` and nextest do, and
//! checks exit codes and output: every outcome is reported, skips carry their reason, the libtest
//! CLI (filters, `--exact`, `--skip`, `--list`, `--ignored`) behaves, stdout stays pure.

use std::time::Duration;

use harness_runtime::scaled;
use harness_selftest::run::{Finished, Running};
use harness_selftest::sandbox::scrubbed_command;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
const SECRET: &str = "selftest-secret-value-7f3a";

/// Every scenario in the binary but those of `tests/reliability`, in the order the runner lists
/// them.
const ALL: &[&str] = &[
    "budgets::first_token_slow",
    "budgets::over_tokens",
    "budgets::then_not_started",
    "canary::secrets_never_leak",
    "cassette::without_cassette",
    "explore::fails_when_the_abort_goes_first",
    "explore::two_points_in_either_order",
    "history::fails_when_asked",
    "hosted::after_rate_limit",
    "hosted::text",
    "hosted::tool_call",
    "hygiene::fixture_panics",
    "hygiene::fixture_passes",
    "hygiene::fixture_returns_err",
    "hygiene::fixture_times_out",
    "hygiene::opencode_returns_err",
    "hygiene_probe::no_owned_process_remains",
    "killed::waits_to_be_killed",
    "outcomes::leaks_secret_in_err",
    "outcomes::leaks_secret_in_panic",
    "outcomes::panics",
    "outcomes::passes",
    "outcomes::returns_err",
    "outcomes::times_out",
    "peers::left",
    "peers::right",
    "pool::fails_on_its_lease",
    "pool::holds_its_lease",
    "rate_limits::always_rate_limited",
    "rate_limits::live_hold_a",
    "rate_limits::live_hold_b",
    "rate_limits::live_turn_after_a_429",
    "rate_limits::recorded_after_a_429",
    "rate_limits::scripted_hold_1",
    "rate_limits::scripted_hold_2",
    "rate_limits::scripted_hold_3",
    "rate_limits::scripted_hold_4",
    "requirements::needs_token",
    "round_trip::dropped_connection_then_text",
    "round_trip::error_mid_stream",
    "round_trip::refused_request",
    "round_trip::server_error_then_text",
    "round_trip::structured_output",
    "round_trip::text_in_deltas",
    "round_trip::tool_call",
    "run_skips::opencode_missing",
    "run_skips::skips_with_reason",
    "shared::first",
    "shared::own",
    "shared::second",
    "shared_beside::fails_beside_its_neighbour",
    "shared_beside::outlives_its_failed_neighbour",
    "shared_death::kills_its_server",
    "shared_death::next_leases_a_new_server",
    "skips::ignored_with_reason",
    "snapshot::names_its_own_file",
    "verdicts::three_of_five",
    "verdicts::three_of_four",
];

/// The scenarios flagged ignored at list time without any variable set: the hygiene, shared,
/// snapshot, round-trip, budget and verdict ones (they require `SELFTEST_SCRATCH`), the cassette
/// one (it has no cassette and no real model), the rate-limit, peer and pool ones (variables
/// only their tests set), `needs_token` and the `ignore`d one.
const SKIPPED_WHEN_LISTED: &[&str] = &[
    "budgets::first_token_slow",
    "budgets::over_tokens",
    "budgets::then_not_started",
    "canary::secrets_never_leak",
    "cassette::without_cassette",
    "hosted::after_rate_limit",
    "hosted::text",
    "hosted::tool_call",
    "hygiene::fixture_panics",
    "hygiene::fixture_passes",
    "hygiene::fixture_returns_err",
    "hygiene::fixture_times_out",
    "hygiene::opencode_returns_err",
    "hygiene_probe::no_owned_process_remains",
    "killed::waits_to_be_killed",
    "peers::left",
    "peers::right",
    "pool::fails_on_its_lease",
    "pool::holds_its_lease",
    "rate_limits::always_rate_limited",
    "rate_limits::live_hold_a",
    "rate_limits::live_hold_b",
    "rate_limits::live_turn_after_a_429",
    "rate_limits::recorded_after_a_429",
    "rate_limits::scripted_hold_1",
    "rate_limits::scripted_hold_2",
    "rate_limits::scripted_hold_3",
    "rate_limits::scripted_hold_4",
    "requirements::needs_token",
    "round_trip::dropped_connection_then_text",
    "round_trip::error_mid_stream",
    "round_trip::refused_request",
    "round_trip::server_error_then_text",
    "round_trip::structured_output",
    "round_trip::text_in_deltas",
    "round_trip::tool_call",
    "run_skips::opencode_missing",
    "shared::first",
    "shared::own",
    "shared::second",
    "shared_beside::fails_beside_its_neighbour",
    "shared_beside::outlives_its_failed_neighbour",
    "shared_death::kills_its_server",
    "shared_death::next_leases_a_new_server",
    "skips::ignored_with_reason",
    "snapshot::names_its_own_file",
    "verdicts::three_of_five",
    "verdicts::three_of_four",
];

/// Runs the scenario binary with `args` and, of the variables that change what it does, exactly
/// those in `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut command = scrubbed_command(SCENARIOS, args);
    command.envs(env.iter().copied());
    Running::start(command).wait(scaled(Duration::from_secs(120)))
}

/// The scenarios of `tests/reliability` share the binary; these tests are about the others.
fn not_reliability(line: &&str) -> bool {
    !line.starts_with("reliability::")
}

#[test]
fn a_passing_scenario_passes_with_progress_on_stderr() {
    let run = run(&["--exact", "outcomes::passes"], &[]);
    run.assert_code(0)
        .assert_stdout("test outcomes::passes ... ok")
        .assert_stdout("1 passed")
        .assert_stderr("[live] outcomes::passes: started")
        .assert_stderr("[live] outcomes::passes: passed in ");
    assert!(
        !run.stdout.contains("[live]"),
        "progress leaked to stdout\n{run}"
    );
}

#[test]
fn an_err_fails_with_its_message() {
    run(&["--exact", "outcomes::returns_err"], &[])
        .assert_code(101)
        .assert_stdout("test outcomes::returns_err ... FAILED")
        .assert_stdout("the answer was 41, expected 42")
        .assert_stderr("[live] outcomes::returns_err: failed in ");
}

#[test]
fn a_panic_fails_with_its_message() {
    run(&["--exact", "outcomes::panics"], &[])
        .assert_code(101)
        .assert_stdout("test outcomes::panics ... FAILED")
        .assert_stdout("panicked: boom at step 3");
}

#[test]
fn a_timeout_cuts_the_scenario_and_says_how_to_scale() {
    // The machine's scale reaches the binary; this test reads the unscaled ceiling.
    let run = run(
        &["--exact", "outcomes::times_out"],
        &[("LIVE_TIMEOUT_SCALE", "1")],
    );
    run.assert_code(101)
        .assert_stdout("`outcomes::times_out` timed out")
        .assert_stdout("ceiling of 1s")
        .assert_stdout("timeout = \"1s\"")
        .assert_stdout("LIVE_TIMEOUT_SCALE=2");
    // The body sleeps 120 s: the ceiling, not the body, ended it (the bound leaves a loaded
    // machine tens of seconds to start and end the binary; CI once took 8.4 s for a 1 s run).
    assert!(
        run.elapsed < Duration::from_secs(60),
        "took {:?}\n{run}",
        run.elapsed
    );
}

#[test]
fn the_timeout_scale_multiplies_the_ceiling() {
    run(
        &["--exact", "outcomes::times_out"],
        &[("LIVE_TIMEOUT_SCALE", "1.5")],
    )
    .assert_code(101)
    .assert_stdout("ceiling of 1s 500ms")
    .assert_stdout("LIVE_TIMEOUT_SCALE=1.5");
}

#[test]
fn an_invalid_timeout_scale_is_an_error_before_any_trial() {
    let run = run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_TIMEOUT_SCALE", "fast")],
    );
    run.assert_code(2)
        .assert_stderr("LIVE_TIMEOUT_SCALE must be a positive number");
    assert!(!run.stdout.contains("running"), "trials ran\n{run}");
}

/// A flag is on, off, or an error: `LIVE_STRICT=on` must not count as off and run lax. Every
/// invalid setting is named, not just the first.
#[test]
fn invalid_flags_are_errors_before_any_trial() {
    let invalid = run(
        &["--exact", "outcomes::passes"],
        &[
            ("LIVE_STRICT", "on"),
            ("LIVE_KEEP", "1 "),
            ("LIVE_SANDBOX", "off"),
        ],
    );
    invalid
        .assert_code(2)
        .assert_stderr("LIVE_STRICT must be 1, true or yes (on), or 0, false or no (off)")
        .assert_stderr("LIVE_KEEP has leading or trailing whitespace")
        .assert_stderr("LIVE_SANDBOX must be 1, true or yes (on), or 0, false or no (off)");
    assert!(!invalid.stdout.contains("running"), "trials ran\n{invalid}");
    run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_STRICT", "no"), ("LIVE_KEEP", "false")],
    )
    .assert_code(0)
    .assert_result("outcomes::passes", "ok");
}

#[test]
fn an_invalid_isolation_is_an_error_before_any_trial() {
    let invalid = run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_ISOLATION", "process")],
    );
    invalid
        .assert_code(2)
        .assert_stderr("LIVE_ISOLATION must be `shared` (the default) or `server`");
    assert!(!invalid.stdout.contains("running"), "trials ran\n{invalid}");
    run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_ISOLATION", "shared")],
    )
    .assert_code(0)
    .assert_result("outcomes::passes", "ok");
}

#[test]
fn secrets_are_redacted_from_err_progress_and_panics() {
    run(&["--exact", "outcomes::leaks_secret_in_err"], &[])
        .assert_code(101)
        .assert_stdout("server rejected token [secret]")
        .assert_stderr("using token [secret]")
        .assert_nowhere(SECRET);
    run(&["--exact", "outcomes::leaks_secret_in_panic"], &[])
        .assert_code(101)
        .assert_stdout("panicked: server rejected token [secret]")
        .assert_stderr("server rejected token [secret]")
        .assert_nowhere(SECRET);
}

#[test]
fn a_missing_requirement_skips_with_its_reason() {
    run(&["--exact", "requirements::needs_token"], &[])
        .assert_code(0)
        .assert_stdout("test requirements::needs_token ... ignored")
        .assert_stdout("HARNESS_SELFTEST_TOKEN is not set")
        .assert_stdout("1 ignored");
}

#[test]
fn a_padded_requirement_skips_without_showing_the_value() {
    run(
        &["--exact", "requirements::needs_token"],
        &[("HARNESS_SELFTEST_TOKEN", "sk-padded-value\n")],
    )
    .assert_code(0)
    .assert_stdout("HARNESS_SELFTEST_TOKEN has leading or trailing whitespace")
    .assert_nowhere("sk-padded-value");
}

#[test]
fn a_met_requirement_runs_the_scenario() {
    run(
        &["--exact", "requirements::needs_token"],
        &[("HARNESS_SELFTEST_TOKEN", "present")],
    )
    .assert_code(0)
    .assert_stdout("test requirements::needs_token ... ok");
}

#[test]
fn strict_mode_fails_a_missing_requirement() {
    run(
        &["--exact", "requirements::needs_token"],
        &[("LIVE_STRICT", "1")],
    )
    .assert_code(101)
    .assert_stdout("test requirements::needs_token ... FAILED")
    .assert_stdout("HARNESS_SELFTEST_TOKEN is not set")
    .assert_stdout("LIVE_STRICT=1");
}

#[test]
fn ignore_skips_with_its_reason_unless_asked_for() {
    run(&["--exact", "skips::ignored_with_reason"], &[])
        .assert_code(0)
        .assert_stdout("test skips::ignored_with_reason ... ignored")
        .assert_stdout("demonstrates ignore");
    run(
        &["--exact", "skips::ignored_with_reason", "--include-ignored"],
        &[],
    )
    .assert_code(0)
    .assert_stdout("test skips::ignored_with_reason ... ok");
}

#[test]
fn ignored_runs_only_the_skipped_scenarios() {
    let run = run(&["--ignored"], &[]);
    run.assert_code(0)
        .assert_result("skips::ignored_with_reason", "ok")
        .assert_result("requirements::needs_token", "ignored")
        .assert_stdout("HARNESS_SELFTEST_TOKEN is not set");
    assert!(!run.stdout.contains("outcomes::"), "non-ignored ran\n{run}");
}

#[test]
fn list_prints_every_scenario_in_order() {
    let run = run(&["--list"], &[]);
    run.assert_code(0);
    let expected: Vec<String> = ALL.iter().map(|name| format!("{name}: test")).collect();
    let listed: Vec<&str> = run
        .stdout_lines()
        .into_iter()
        .filter(|l| !l.is_empty())
        .filter(not_reliability)
        .collect();
    assert_eq!(&listed[..ALL.len()], expected, "\n{run}");
}

#[test]
fn terse_list_stdout_holds_only_test_lines() {
    // nextest's listing contract: stdout is `name: test` lines and nothing else.
    let all = run(&["--list", "--format", "terse"], &[]);
    all.assert_code(0);
    assert!(
        all.stdout_lines().iter().all(|l| l.ends_with(": test")),
        "\n{all}"
    );
    let ours = |run: &Finished| -> Vec<String> {
        let lines = run.stdout_lines();
        lines
            .into_iter()
            .filter(not_reliability)
            .map(String::from)
            .collect()
    };
    let expected: Vec<String> = ALL.iter().map(|name| format!("{name}: test")).collect();
    assert_eq!(ours(&all), expected, "\n{all}");

    // Skipped scenarios are flagged ignored at list time, so nextest reports them skipped.
    let listed = |names: &[&str]| -> Vec<String> {
        names.iter().map(|name| format!("{name}: test")).collect()
    };
    let ignored = run(&["--list", "--format", "terse", "--ignored"], &[]);
    assert_eq!(ours(&ignored), listed(SKIPPED_WHEN_LISTED), "\n{ignored}");
    // Every scenario of `tests/reliability` requires something a plain run lacks.
    let reliability = |run: &Finished| -> Vec<String> {
        let lines = run.stdout_lines();
        lines
            .into_iter()
            .filter(|l| !not_reliability(l))
            .map(String::from)
            .collect()
    };
    assert!(!reliability(&all).is_empty(), "\n{all}");
    assert_eq!(reliability(&ignored), reliability(&all), "\n{ignored}");
    let with_token = run(
        &["--list", "--format", "terse", "--ignored"],
        &[("HARNESS_SELFTEST_TOKEN", "present")],
    );
    let without_token: Vec<&str> = SKIPPED_WHEN_LISTED
        .iter()
        .copied()
        .filter(|name| *name != "requirements::needs_token")
        .collect();
    assert_eq!(ours(&with_token), listed(&without_token), "\n{with_token}");
    // Under LIVE_STRICT the requirement is not a skip: it runs (and fails).
    let strict = run(
        &["--list", "--format", "terse", "--ignored"],
        &[("LIVE_STRICT", "1")],
    );
    assert_eq!(
        strict.stdout_lines(),
        ["skips::ignored_with_reason: test"],
        "\n{strict}"
    );
}

#[test]
fn a_filter_selects_by_substring_and_skip_removes() {
    let filtered = run(&["--list", "--format", "terse", "leaks_secret"], &[]);
    assert_eq!(
        filtered.stdout_lines(),
        [
            "outcomes::leaks_secret_in_err: test",
            "outcomes::leaks_secret_in_panic: test"
        ],
        "\n{filtered}"
    );
    let skipped = run(
        &[
            "--list",
            "--format",
            "terse",
            "outcomes::",
            "--skip",
            "leaks",
            "--skip",
            "times_out",
        ],
        &[],
    );
    assert_eq!(
        skipped.stdout_lines(),
        [
            "outcomes::panics: test",
            "outcomes::passes: test",
            "outcomes::returns_err: test"
        ],
        "\n{skipped}"
    );
    run(&["outcomes::pass"], &[])
        .assert_code(0)
        .assert_stdout("test outcomes::passes ... ok")
        .assert_stdout("1 passed");
}

#[test]
fn exact_matches_whole_names_only() {
    run(&["--exact", "outcomes::pass"], &[])
        .assert_code(0)
        .assert_stdout("running 0 tests");
    let every = run(&["--list", "--format", "terse"], &[])
        .stdout_lines()
        .len();
    let exact_skip = run(
        &[
            "--list",
            "--format",
            "terse",
            "--exact",
            "--skip",
            "outcomes::passes",
        ],
        &[],
    );
    assert_eq!(exact_skip.stdout_lines().len(), every - 1, "\n{exact_skip}");
    assert!(
        !exact_skip.stdout.contains("outcomes::passes"),
        "\n{exact_skip}"
    );
}

/// As libtest: a scenario runs when its name matches any filter and no `--skip`; `--exact`
/// makes both whole-name matches; the rest counts as filtered out.
#[test]
fn several_filters_select_what_matches_any() {
    // Every scenario, `tests/reliability`'s too: the summary counts all but the selected.
    let every = run(&["--list", "--format", "terse"], &[])
        .stdout_lines()
        .len();
    let both = run(&["outcomes::pass", "skips::ignored"], &[]);
    both.assert_code(0)
        .assert_result("outcomes::passes", "ok")
        .assert_result("skips::ignored_with_reason", "ignored")
        .assert_stdout(&format!(
            "1 passed; 0 failed; 1 ignored; 0 measured; {} filtered out",
            every - 2
        ));
    assert_eq!(both.results().len(), 2, "\n{both}");

    let listed = |args: &[&str]| -> Vec<String> {
        let mut argv = vec!["--list", "--format", "terse"];
        argv.extend_from_slice(args);
        let run = run(&argv, &[]);
        run.assert_code(0);
        run.stdout_lines().into_iter().map(String::from).collect()
    };
    let tests = |names: &[&str]| -> Vec<String> {
        names.iter().map(|name| format!("{name}: test")).collect()
    };
    assert_eq!(
        listed(&[
            "--exact",
            "outcomes::passes",
            "outcomes::pan",
            "skips::ignored_with_reason"
        ]),
        tests(&["outcomes::passes", "skips::ignored_with_reason"])
    );
    assert_eq!(
        listed(&["outcomes::pa", "round_trip::t", "--skip", "text"]),
        tests(&[
            "outcomes::panics",
            "outcomes::passes",
            "round_trip::tool_call"
        ])
    );
    // Under `--exact` a skip is a whole name too: `passes` removes nothing.
    assert_eq!(
        listed(&[
            "--exact",
            "outcomes::passes",
            "outcomes::panics",
            "--skip",
            "passes",
            "--skip",
            "outcomes::panics",
        ]),
        tests(&["outcomes::passes"])
    );
    // `--exact` with two names runs both and only them.
    let two = run(
        &["--exact", "outcomes::passes", "outcomes::returns_err"],
        &[],
    );
    two.assert_code(101)
        .assert_result("outcomes::passes", "ok")
        .assert_result("outcomes::returns_err", "FAILED")
        .assert_stdout(&format!(
            "1 passed; 1 failed; 0 ignored; 0 measured; {} filtered out",
            every - 2
        ));
    assert_eq!(two.results().len(), 2, "\n{two}");
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let run = run(&["outcomes::passes", "--bogus"], &[]);
    run.assert_code(2).assert_stderr("--bogus");
    assert!(!run.stdout.contains("running"), "trials ran\n{run}");
}

#[test]
fn quiet_and_nocapture_are_accepted() {
    run(
        &[
            "-q",
            "--nocapture",
            "--test-threads",
            "1",
            "outcomes::passes",
        ],
        &[],
    )
    .assert_code(0)
    .assert_stdout("1 passed");
}

#[test]
fn a_whole_run_reports_every_failure_and_fails() {
    let run = run(&["--test-threads", "2"], &[]);
    run.assert_code(101)
        // Passed: `outcomes::passes`, the passing exploration and `history::fails_when_asked`
        // (it fails only when asked); failed: the four failing outcomes and the racy
        // exploration. Ignored: the two of `skips`/`requirements`, the 27 that require
        // `SELFTEST_SCRATCH` or a canary (`hosted`'s three among them), `run_skips::skips_with_reason` (skipped at run time),
        // the cassette one (no cassette, no real model), the 14 of `budgets`, `rate_limits` and
        // `verdicts` (variables only their tests set), the 2 of `peers` (`SELFTEST_PEERS`), the 2
        // of `pool` (`SELFTEST_POOL_*`), the
        // 114 of `reliability` (they require `SELFTEST_SCRATCH`, a real model or
        // `LIVE_SNAPSHOT_DIR`) and its 1,051 soak ones (`RELIABILITY_SOAK`).
        .assert_stdout("3 passed; 6 failed; 1214 ignored")
        .assert_result("history::fails_when_asked", "ok")
        .assert_result("outcomes::passes", "ok")
        .assert_result(EXPLORING, "ok")
        .assert_result(RACY, "FAILED")
        .assert_result("outcomes::times_out", "FAILED")
        .assert_result("skips::ignored_with_reason", "ignored")
        .assert_stdout("---- outcomes::returns_err ----")
        .assert_stdout("---- outcomes::panics ----")
        .assert_stdout("---- outcomes::times_out ----")
        .assert_nowhere(SECRET);
}

/// The `cassette` scenario of the binary, which has no cassette.
const CASSETTE_SCENARIO: &str = "cassette::without_cassette";
/// Where its cassette would be, as messages show it, and the command that records it.
const CASSETTE_HINT: &str = "no cassette at cassettes/cassette__without_cassette.json; record one \
     with `LIVE_CASSETTE=record cargo test --test selftest-scenarios -- \
     cassette::without_cassette --exact`";

/// The variables a cassette scenario's real model needs, named as missing.
const MODEL_UNSET: [&str; 2] = [
    "TEST_OLLAMA_MODEL is not set",
    "OPENCODE_CONFIG_CONTENT is not set",
];

fn assert_no_cassette_in_the_crate() {
    let cassette = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cassettes/cassette__without_cassette.json");
    assert!(
        !cassette.exists(),
        "{} exists: these tests are about a cassette scenario without one",
        cassette.display()
    );
}

/// Without its cassette and without the real model's variables, a `cassette` scenario is skipped
/// as a real-model scenario is, and the reason says how to record the cassette; under
/// `LIVE_CASSETTE=live` nothing is said about the cassette.
#[test]
fn a_cassette_scenario_without_cassette_or_model_skips_saying_how_to_record() {
    assert_no_cassette_in_the_crate();
    let skipped = run(&["--exact", CASSETTE_SCENARIO], &[]);
    skipped
        .assert_code(0)
        .assert_result(CASSETTE_SCENARIO, "ignored")
        .assert_stdout("1 ignored")
        .assert_shows(&MODEL_UNSET)
        .assert_stdout(CASSETTE_HINT)
        .assert_stderr(&format!("[live] {CASSETTE_SCENARIO}: skipped: requires "));
    // Its body never started: no `model: …` line, no `started`.
    assert!(skipped.started().is_empty(), "\n{skipped}");
    skipped.assert_nowhere("model: ");

    run(
        &["--exact", CASSETTE_SCENARIO],
        &[("LIVE_CASSETTE", "live")],
    )
    .assert_code(0)
    .assert_result(CASSETTE_SCENARIO, "ignored")
    .assert_shows(&MODEL_UNSET)
    .assert_nowhere("no cassette at");

    // A cassette folder elsewhere is shown by its variable, never by its (temporary) path.
    let elsewhere = tempfile::tempdir().unwrap();
    let dir = elsewhere.path().to_str().unwrap();
    run(
        &["--exact", CASSETTE_SCENARIO],
        &[("LIVE_CASSETTE_DIR", dir)],
    )
    .assert_code(0)
    .assert_stdout("no cassette at $LIVE_CASSETTE_DIR/cassette__without_cassette.json;")
    .assert_nowhere(dir);
}

/// What was a skip fails when asked to: under `LIVE_STRICT=1`, when replay is forced and there is
/// no cassette, and when recording is asked for without the real model.
#[test]
fn a_cassette_scenario_without_cassette_or_model_fails_when_asked_to() {
    assert_no_cassette_in_the_crate();
    run(&["--exact", CASSETTE_SCENARIO], &[("LIVE_STRICT", "1")])
        .assert_code(101)
        .assert_result(CASSETTE_SCENARIO, "FAILED")
        .assert_shows(&MODEL_UNSET)
        .assert_stdout(CASSETTE_HINT)
        .assert_stdout("LIVE_STRICT=1 makes a missing requirement a failure");
    let replay = run(
        &["--exact", CASSETTE_SCENARIO],
        &[("LIVE_CASSETTE", "replay")],
    );
    replay
        .assert_code(101)
        .assert_result(CASSETTE_SCENARIO, "FAILED")
        .assert_stdout(
            "LIVE_CASSETTE=replay, but there is no cassette at \
             cassettes/cassette__without_cassette.json: record one with `LIVE_CASSETTE=record \
             cargo test --test selftest-scenarios -- cassette::without_cassette --exact`",
        )
        // Replaying needs no model variable: they are not what failed it.
        .assert_nowhere("TEST_OLLAMA_MODEL");
    assert!(replay.started().is_empty(), "\n{replay}");
    run(
        &["--exact", CASSETTE_SCENARIO],
        &[("LIVE_CASSETTE", "record")],
    )
    .assert_code(101)
    .assert_result(CASSETTE_SCENARIO, "FAILED")
    .assert_shows(&MODEL_UNSET)
    .assert_stdout("LIVE_CASSETTE=record records the real model, which needs them");
}

/// Listing flags the cassette scenario ignored exactly when running would skip it (nextest
/// decides from `--list`): not when replay is forced or strictness makes it fail, nor when its
/// cassette exists (replaying needs no model variable).
#[test]
fn a_cassette_scenario_is_listed_as_it_would_run() {
    let ignored = |env: &[(&str, &str)]| -> Vec<String> {
        let listed = run(
            &[
                "--list",
                "--format",
                "terse",
                "--ignored",
                CASSETTE_SCENARIO,
            ],
            env,
        );
        listed.assert_code(0);
        listed
            .stdout_lines()
            .into_iter()
            .map(String::from)
            .collect()
    };
    let flagged = vec![format!("{CASSETTE_SCENARIO}: test")];
    assert_eq!(ignored(&[]), flagged);
    assert_eq!(ignored(&[("LIVE_CASSETTE", "live")]), flagged);
    assert!(ignored(&[("LIVE_CASSETTE", "replay")]).is_empty());
    assert!(ignored(&[("LIVE_CASSETTE", "record")]).is_empty());
    assert!(ignored(&[("LIVE_STRICT", "1")]).is_empty());
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        elsewhere.path().join("cassette__without_cassette.json"),
        "{}\n",
    )
    .unwrap();
    let dir = elsewhere.path().to_str().unwrap();
    // With the cassette present it replays; only its own `requires` (`SELFTEST_SCRATCH`) remain.
    assert_eq!(ignored(&[("LIVE_CASSETTE_DIR", dir)]), flagged);
    assert!(
        ignored(&[("LIVE_CASSETTE_DIR", dir), ("SELFTEST_SCRATCH", dir)]).is_empty(),
        "a replay was flagged as lacking the model's variables"
    );
    // With the same variables but no cassette, it lacks the real model.
    let empty = tempfile::tempdir().unwrap();
    let empty = empty.path().to_str().unwrap();
    assert_eq!(
        ignored(&[("LIVE_CASSETTE_DIR", empty), ("SELFTEST_SCRATCH", empty)]),
        flagged
    );
}

#[test]
fn an_invalid_cassette_mode_is_an_error_before_any_trial() {
    let invalid = run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_CASSETTE", "replay\n"), ("LIVE_CASSETTE_DIR", "")],
    );
    invalid
        .assert_code(2)
        .assert_stderr("LIVE_CASSETTE has leading or trailing whitespace")
        .assert_stderr("LIVE_CASSETTE_DIR is empty");
    assert!(!invalid.stdout.contains("running"), "trials ran\n{invalid}");
    run(
        &["--exact", "outcomes::passes"],
        &[("LIVE_CASSETTE", "record")],
    )
    .assert_code(0)
    .assert_result("outcomes::passes", "ok");
}

#[test]
fn an_unknown_role_is_a_clear_error() {
    run(&[], &[("HARNESS_RUNTIME_ROLE", "wizard")])
        .assert_code(2)
        .assert_stderr(
            "HARNESS_RUNTIME_ROLE must be `fixture-agent`, `reaper`, `sandbox`, `pool` or \
             `acp-forward`",
        )
        .assert_stderr("unset it to run the scenarios");
}

/// The exploring scenarios of the binary: two product points, so one decision between two steps
/// per run, and every ordering is tried (no agent). The first passes in either order, the
/// second fails in the order that is not the default.
const EXPLORING: &str = "explore::two_points_in_either_order";
const RACY: &str = "explore::fails_when_the_abort_goes_first";
/// The racy one's failing schedule: the abort's pass (tag 6bde) before the reply's (6498).
const ABORT_FIRST: &str = "6bde.1>6498.1";

#[test]
fn a_passing_exploration_says_it_tried_every_ordering() {
    let run = run(&["--exact", EXPLORING], &[("LIVE_EXPLORE_SEED", "1234")]);
    run.assert_code(0)
        .assert_result(EXPLORING, "ok")
        .assert_stderr(&format!(
            "[live] {EXPLORING}: exploring up to 4 schedules within 30s (seed 1234; \
             LIVE_EXPLORE_SEED=1234 repeats this search)"
        ))
        .assert_stderr(&format!("[live] {EXPLORING}: passed in "))
        .assert_stderr(": all 2 orderings tried");
    assert!(
        !run.stdout.contains("[live]"),
        "progress leaked to stdout\n{run}"
    );
}

/// A schedule that does not parse names the character and the entry, before any trial runs.
#[test]
fn a_malformed_schedule_is_an_error_before_any_trial() {
    let run = run(&["--exact", EXPLORING], &[("LIVE_SCHEDULE", "da2a.1>zz.1")]);
    run.assert_code(2).assert_stderr(
        "LIVE_SCHEDULE is not a schedule: at character 8 (entry 1, \"da2a.1>zz.1\"): `zz` is \
         not a tag: expected 4 hex digits",
    );
    assert!(!run.stdout.contains("running"), "trials ran\n{run}");
    assert!(run.started().is_empty(), "\n{run}");
}

/// A replayed deviation between steps the run never holds together (the code changed since the
/// schedule was printed): the run goes on unscheduled and passes, which proves nothing, so the
/// scenario fails saying which deviation never came up.
#[test]
fn a_schedule_that_no_longer_fits_fails_a_passing_run() {
    run(
        &["--exact", EXPLORING],
        &[("LIVE_SCHEDULE", "0000.1>0001.1")],
    )
    .assert_code(101)
    .assert_result(EXPLORING, "FAILED")
    .assert_stderr(&format!(
        "[live] {EXPLORING}: replaying schedule 0000.1>0001.1 (LIVE_SCHEDULE)"
    ))
    .assert_stdout(&format!(
        "`{EXPLORING}` no longer fits schedule 0000.1>0001.1: its deviation 0000.1>0001.1 \
             never came up: the run (1 decision) never held step 0000.1 and step 0001.1 together"
    ))
    .assert_stdout("explore again (unset LIVE_SCHEDULE)");
    // The schedule every run of it takes replays and passes.
    run(&["--exact", EXPLORING], &[("LIVE_SCHEDULE", "fifo")])
        .assert_code(0)
        .assert_result(EXPLORING, "ok")
        .assert_stderr(": passed in ")
        .assert_stderr("schedule fifo passed");
}

#[test]
fn an_invalid_seed_quiet_or_confirm_is_an_error_before_any_trial() {
    let invalid = run(
        &["--exact", EXPLORING],
        &[
            ("LIVE_EXPLORE_SEED", "0x10"),
            ("LIVE_EXPLORE_QUIET", "11s"),
            ("LIVE_EXPLORE_CONFIRM", "two"),
        ],
    );
    invalid
        .assert_code(2)
        .assert_stderr(
            "LIVE_EXPLORE_SEED must be a whole number from 0 to 18446744073709551615, such as \
             the seed an exploration printed",
        )
        .assert_stderr("LIVE_EXPLORE_QUIET must be a duration from 1ms to 10s")
        .assert_stderr("LIVE_EXPLORE_CONFIRM must be a whole number from 0 to 100");
    assert!(!invalid.stdout.contains("running"), "trials ran\n{invalid}");
    run(
        &["--exact", EXPLORING],
        &[("LIVE_EXPLORE_SEED", "7"), ("LIVE_EXPLORE_QUIET", "5ms")],
    )
    .assert_code(0)
    .assert_result(EXPLORING, "ok");
}

/// The search finds the one failing order at its second schedule, has nothing to shrink,
/// replays it twice, and prints the line that replays it; that line fails again, and the
/// default order passes.
#[test]
fn a_failing_exploration_prints_the_schedule_and_its_replay_line() {
    let found = run(&["--exact", RACY], &[("LIVE_EXPLORE_SEED", "1234")]);
    found
        .assert_code(101)
        .assert_result(RACY, "FAILED")
        .assert_stdout(&format!(
            "`{RACY}` failed under schedule {ABORT_FIRST} (found at schedule 2 of at most 4, \
             exhaustive search, seed 1234; reproduced 2 of 2 replays)"
        ))
        .assert_stdout("the abort went before the reply: [\"abort\", \"reply\"]")
        .assert_stdout("decisions of the failing run:")
        .assert_stdout(&format!(
            "replay it: LIVE_SCHEDULE='{ABORT_FIRST}' cargo test"
        ))
        .assert_stdout(&format!(" --test selftest-scenarios -- {RACY} --exact"))
        .assert_stderr(&format!(
            "[live] {RACY}: schedule 2 failed ({ABORT_FIRST}): shrinking it"
        ))
        .assert_stderr(&format!("[live] {RACY}: failed in "));

    run(&["--exact", RACY], &[("LIVE_SCHEDULE", ABORT_FIRST)])
        .assert_code(101)
        .assert_stdout(&format!(
            "`{RACY}` failed under schedule {ABORT_FIRST} (LIVE_SCHEDULE)"
        ))
        .assert_stdout("the abort went before the reply")
        .assert_nowhere("no longer fit");
    run(&["--exact", RACY], &[("LIVE_SCHEDULE", "fifo")])
        .assert_code(0)
        .assert_result(RACY, "ok");
}

/// `LIVE_EXPLORE_CONFIRM` sets how often the found schedule is replayed; 0 says it was not.
#[test]
fn the_confirming_replays_follow_live_explore_confirm() {
    for (confirm, said) in [
        ("0", "; not replayed: LIVE_EXPLORE_CONFIRM=0)".to_owned()),
        ("3", "; reproduced 3 of 3 replays)".to_owned()),
    ] {
        run(
            &["--exact", RACY],
            &[
                ("LIVE_EXPLORE_SEED", "1234"),
                ("LIVE_EXPLORE_CONFIRM", confirm),
            ],
        )
        .assert_code(101)
        .assert_stdout(&format!(
            "`{RACY}` failed under schedule {ABORT_FIRST} (found at schedule 2 of at most 4, \
             exhaustive search, seed 1234{said}"
        ));
    }
}
