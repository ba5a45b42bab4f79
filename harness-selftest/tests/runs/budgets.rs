//! Budgets with real OpenCode and no real model: the `budgets::` scenarios of
//! `selftest-scenarios` against a scripted upstream this process runs (as `tests/runs/cassettes`
//! does). Recorded, a turn's usage (reported by the upstream, priced by the config) breaches
//! `max_tokens` and `max_cost`, and a slow stream breaches `max_first_token`, each failure giving
//! the figure and the limit; the run's ceiling (`LIVE_RUN_MAX_TOKENS`), spent by then, keeps the
//! next live-model scenario from starting and the run's end names it. Replayed with the
//! upstream stopped, the same breaches fail with the same figures, from the cassettes; the run
//! report has the usage and the cost the replay avoided.

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_runtime::testing::MODEL_ID;
use harness_selftest::budgets::{self as case, FIRST_TOKEN_DELAY, PRICE_PER_MILLION, SLOW_CHUNKS};
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::report::{report_data, scenario};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::run_sandboxed;
use harness_selftest::test;
use harness_selftest::upstream::ScriptedUpstream;
use serde_json::json;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
/// The breach of `over_tokens`, recorded and replayed alike.
const TOKENS_BREACH: &str =
    "budget: 980 tokens > max_tokens 500 (input 900, output 80, reasoning 0)";
/// Its cost breach: (900 + 80) tokens at 10 per million.
const COST_BREACH: &str = "budget: cost 0.0098 > max_cost 0.005 (1 turn(s))";
/// The ceiling's reason for `then_not_started`.
const NOT_STARTED: &str = "not started: the run's live-model ceiling LIVE_RUN_MAX_TOKENS=500 is \
                           spent (995 tokens, cost 0.00995 spent by 2 live-model run(s))";

pub(crate) fn tests() -> Vec<Test> {
    vec![test!(breaches_live_and_replayed_and_the_run_ceiling).needs(OpenCode)]
}

/// Runs `args` of the scenario binary with the cassettes in `cassettes`, `env` and nothing else
/// of this process's settings; nothing of the run is left running.
fn run(cassettes: &Path, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let dir = cassettes.to_str().expect("a UTF-8 temp dir");
    let env = [&[("LIVE_CASSETTE_DIR", dir)], env].concat();
    run_sandboxed(SCENARIOS, args, &env, scaled(RUN_CEILING))
}

/// The `budget: first token after …` line of `finished`.
fn first_token_line(finished: &Finished) -> &str {
    finished
        .stdout
        .lines()
        .find(|line| line.starts_with("budget: first token after "))
        .unwrap_or_else(|| panic!("no first-token breach\n{finished}"))
}

/// The `budget: turn 1 took …` line of `finished`.
fn turn_line(finished: &Finished) -> &str {
    finished
        .stdout
        .lines()
        .find(|line| line.starts_with("budget: turn 1 took "))
        .unwrap_or_else(|| panic!("no turn breach\n{finished}"))
}

/// The seconds of `budget: first token after 0.71s > …` or `budget: turn 1 took 2.90s > …`.
fn seconds(line: &str) -> f64 {
    line.trim_start_matches("budget: first token after ")
        .trim_start_matches("budget: turn 1 took ")
        .split('s')
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no figure in {line:?}"))
}

/// Run 1 records the three scenarios (in name order, one at a time) under a ceiling of 500
/// tokens: the slow stream and the costly turn fail their budgets with figures measured from
/// the upstream, and the third is not started. Run 2 replays the first two with the upstream
/// stopped: the same breaches, from the cassettes.
fn breaches_live_and_replayed_and_the_run_ceiling() {
    let cassettes = tempfile::tempdir().expect("a temp dir for cassettes");
    let mut upstream = ScriptedUpstream::start(case::script_upstream);
    // Priced, so OpenCode reports a cost.
    let config = upstream
        .config("Budgets upstream", "budgets-test-key")
        .model_field(
            "cost",
            json!({"input": PRICE_PER_MILLION, "output": PRICE_PER_MILLION}),
        )
        .to_string();
    let recorded = run(
        cassettes.path(),
        &["--test-threads", "1", "budgets::"],
        &[
            ("LIVE_CASSETTE", "record"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL_ID),
            ("LIVE_RUN_MAX_TOKENS", "500"),
        ],
    );
    recorded
        .assert_code(101)
        .assert_result("budgets::first_token_slow", "FAILED")
        .assert_result("budgets::over_tokens", "FAILED")
        .assert_stdout(TOKENS_BREACH)
        .assert_stdout(COST_BREACH)
        .assert_nowhere("max_output_tokens 100")
        .assert_result("budgets::then_not_started", "ignored")
        .assert_stderr(&format!(
            "[live] budgets::then_not_started: skipped: {NOT_STARTED}\n"
        ))
        .assert_stderr(
            "live run ceiling: 1 live-model scenario(s) not run: budgets::then_not_started \
             (LIVE_RUN_MAX_TOKENS=500; 995 tokens, cost 0.00995 spent by 2 live-model run(s))",
        );
    let live_line = first_token_line(&recorded).to_owned();
    assert!(
        live_line.ends_with("> max_first_token 300ms (request 1 of 1)"),
        "{live_line}"
    );
    assert!(
        seconds(&live_line) >= FIRST_TOKEN_DELAY.as_secs_f64(),
        "the first token came after the upstream's delay: {live_line}"
    );
    // The turn waited for every slow chunk: on the wall while recorded.
    let slow_turn = (FIRST_TOKEN_DELAY * SLOW_CHUNKS).as_secs_f64();
    let live_turn = turn_line(&recorded).to_owned();
    assert!(
        live_turn.ends_with("> max_turn 2s (1 of 1)") && seconds(&live_turn) >= slow_turn,
        "{live_turn}"
    );
    // The scenario kept from starting sent nothing; the other two one request each.
    assert_eq!(upstream.model().requests().len(), 2, "\n{recorded}");
    for scenario in ["budgets__first_token_slow", "budgets__over_tokens"] {
        let file = cassettes.path().join(format!("{scenario}.json"));
        assert!(
            file.exists(),
            "{} was not written\n{recorded}",
            file.display()
        );
    }

    upstream.stop();
    let report = tempfile::tempdir().expect("a temp dir for the report");
    let replayed = run(
        cassettes.path(),
        &[
            "--test-threads",
            "2",
            "budgets::first_token_slow",
            "budgets::over_tokens",
        ],
        &[("LIVE_REPORT", report.path().to_str().unwrap())],
    );
    replayed
        .assert_code(101)
        .assert_result("budgets::first_token_slow", "FAILED")
        .assert_result("budgets::over_tokens", "FAILED")
        .assert_stdout(TOKENS_BREACH)
        .assert_stdout(COST_BREACH)
        .assert_nowhere("model: record");
    // The recorded figure, held to the limit as written, and said to be the recording's.
    let replayed_line = first_token_line(&replayed);
    assert_eq!(
        replayed_line,
        live_line.replace("(request 1 of 1)", "(request 1 of 1, as recorded)"),
        "\n{replayed}"
    );
    // The replayed turn takes what its request took when recorded: its chunks' delays.
    let replayed_turn = turn_line(&replayed);
    assert!(
        replayed_turn.ends_with("> max_turn 2s (1 of 1, as recorded)")
            && seconds(replayed_turn) >= slow_turn,
        "{replayed_turn}"
    );

    let data = report_data(report.path());
    let usage = &scenario(&data, "budgets::over_tokens")["usage"];
    assert_eq!(usage["input"], 900, "{usage:#}");
    assert_eq!(usage["output"], 80, "{usage:#}");
    assert_eq!(usage["clock"], "recorded", "{usage:#}");
    assert_eq!(
        usage["turns"].as_array().map(Vec::len),
        Some(1),
        "{usage:#}"
    );
    let avoided = usage["avoided_cost"]
        .as_f64()
        .expect("a replay's avoided cost");
    assert!((avoided - 0.0098).abs() < 1e-9, "{usage:#}");
    let slow = &scenario(&data, "budgets::first_token_slow")["usage"];
    let (request, ms) = (
        &slow["slowest_first_token"][0],
        &slow["slowest_first_token"][1],
    );
    assert_eq!(request, 1, "{slow:#}");
    assert!(
        ms.as_u64()
            .is_some_and(|ms| ms >= FIRST_TOKEN_DELAY.as_millis() as u64),
        "{slow:#}"
    );
}
