//! Verdicts over several runs with real OpenCode and no real model: the `verdicts::` scenarios
//! of `selftest-scenarios` (`passes = "K of N"`) recorded from a scripted upstream this process
//! runs (as `tests/runs/cassettes` does), which answers in a known pattern. `3 of 5`, answered
//! right, wrong, right, right, passes after exactly 4 runs (the upstream's request count says so,
//! and the progress lines); `3 of 4`, answered right, wrong, wrong, fails after exactly 3, listing
//! each run, with its passing run's cassette not kept and its failed run's pending beside it.
//! Replayed with the upstream stopped, `3 of 5` runs once.

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_runtime::testing::MODEL_ID;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::report::{report_data, scenario};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::run_sandboxed;
use harness_selftest::test;
use harness_selftest::upstream::ScriptedUpstream;
use harness_selftest::verdicts::{self as case, THREE_OF_FIVE, THREE_OF_FOUR};

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
const PASSING: &str = "verdicts::three_of_five";
const FAILING: &str = "verdicts::three_of_four";

pub(crate) fn tests() -> Vec<Test> {
    vec![test!(k_of_n_stops_once_decided_and_replays_once).needs(OpenCode)]
}

/// The requests that asked `prompt` (one per run: each run is one turn answered in text),
/// and how many requests nothing in the script answered.
fn asked(upstream: &ScriptedUpstream, prompt: &str) -> (usize, usize) {
    let model = upstream.model();
    let asked = model
        .requests()
        .iter()
        .filter(|r| r.last_user_text.as_deref() == Some(prompt))
        .count();
    (asked, model.misses().len())
}

/// Runs `args` of the scenario binary with the cassette folder `cassettes` and `env`, and
/// checks nothing of the run is left running.
fn run(cassettes: &Path, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let dir = cassettes.to_str().expect("a UTF-8 temp dir");
    let env = [&[("LIVE_CASSETTE_DIR", dir)], env].concat();
    run_sandboxed(SCENARIOS, args, &env, scaled(RUN_CEILING))
}

/// The progress lines of `name` that start with `prefix` (after the scenario's name).
fn lines<'a>(finished: &'a Finished, name: &str, prefix: &str) -> Vec<&'a str> {
    let start = format!("[live] {name}: {prefix}");
    finished
        .stderr
        .lines()
        .filter(|line| line.starts_with(&start))
        .collect()
}

fn k_of_n_stops_once_decided_and_replays_once() {
    let cassettes = tempfile::tempdir().expect("a temp dir for cassettes");
    let report = tempfile::tempdir().expect("a temp dir for the report");
    let mut upstream = ScriptedUpstream::start(case::script_upstream);
    let config = upstream
        .config("Verdicts upstream", "verdicts-test-key")
        .to_string();
    let recorded = run(
        cassettes.path(),
        &["--test-threads", "2", "verdicts::"],
        &[
            ("LIVE_CASSETTE", "record"),
            ("LIVE_MODEL_CONCURRENCY", "2"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL_ID),
            ("LIVE_REPORT", report.path().to_str().unwrap()),
        ],
    );
    recorded
        .assert_code(101)
        .assert_result(PASSING, "ok")
        .assert_result(FAILING, "FAILED");

    // 3 of 5: right, wrong, right, right: decided at run 4, run 5 never starts.
    assert_eq!(asked(&upstream, THREE_OF_FIVE), (4, 0), "\n{recorded}");
    let runs = lines(&recorded, PASSING, "run ");
    assert_eq!(runs.len(), 4, "{runs:#?}\n{recorded}");
    for (index, line) in runs.iter().enumerate() {
        let at = format!("[live] {PASSING}: run {} of at most 5: ", index + 1);
        let outcome = if index == 1 {
            "failed in "
        } else {
            "passed in "
        };
        assert!(
            line.starts_with(&format!("{at}{outcome}")),
            "{line}\n{recorded}"
        );
    }
    assert!(
        runs[1].ends_with(&format!(
            "s: the model said {:?}, not the right word",
            case::WRONG
        )),
        "{}",
        runs[1]
    );
    let verdict = lines(&recorded, PASSING, "passed in ");
    assert!(
        verdict.len() == 1 && verdict[0].ends_with("s: 3 of 4 passed (3 of 5 needed)"),
        "{verdict:?}\n{recorded}"
    );
    // The passing run's cassette is kept; the failed run 2's pending recording did not survive.
    let cassette = cassettes.path().join("verdicts__three_of_five.json");
    assert!(cassette.exists(), "{}\n{recorded}", cassette.display());
    assert!(
        !cassettes
            .path()
            .join("verdicts__three_of_five.json.pending")
            .exists(),
        "{recorded}"
    );

    // 3 of 4: right, wrong, wrong: after run 3 three passes are out of reach.
    assert_eq!(asked(&upstream, THREE_OF_FOUR), (3, 0), "\n{recorded}");
    assert_eq!(lines(&recorded, FAILING, "run ").len(), 3, "\n{recorded}");
    let verdict = lines(&recorded, FAILING, "failed in ");
    assert!(
        verdict.len() == 1 && verdict[0].ends_with("s: 1 of 3 passed (3 of 4 needed)"),
        "{verdict:?}\n{recorded}"
    );
    recorded
        .assert_stdout(&format!(
            "`{FAILING}` failed its verdict: 1 of 3 passed (3 of 4 needed); 3 passes can no \
             longer be reached\n"
        ))
        .assert_stdout("\nrun 1: passed in ")
        .assert_stdout("\nrun 3: failed in ")
        .assert_stdout(&format!(
            "    the model said {:?}, not the right word\n",
            case::WRONG
        ))
        .assert_stderr(&format!(
            "[live] {FAILING}: the verdict did not pass: a passing run's recording is not kept"
        ));
    // Run 1 wrote a cassette, which the failed verdict removed again; run 3's pending stays.
    assert!(
        !cassettes
            .path()
            .join("verdicts__three_of_four.json")
            .exists(),
        "{recorded}"
    );
    assert!(
        cassettes
            .path()
            .join("verdicts__three_of_four.json.pending")
            .exists(),
        "{recorded}"
    );

    // The report has each run's outcome.
    let data = report_data(report.path());
    let shown = &scenario(&data, PASSING)["verdict"];
    assert_eq!(
        shown["summary"], "3 of 4 passed (3 of 5 needed)",
        "{shown:#}"
    );
    let outcomes: Vec<&str> = shown["runs"]
        .as_array()
        .expect("the runs")
        .iter()
        .map(|r| r["outcome"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        outcomes,
        ["passed", "failed", "passed", "passed"],
        "{shown:#}"
    );

    // Replayed, with the upstream stopped and no model variable: one run decides.
    upstream.stop();
    let replayed = run(cassettes.path(), &["--exact", PASSING], &[]);
    replayed
        .assert_code(0)
        .assert_result(PASSING, "ok")
        .assert_stderr(&format!(
            "[live] {PASSING}: passes = \"3 of 5\" samples a real model; replayed from its \
             cassette, one run decides\n"
        ))
        .assert_nowhere("of at most 5")
        .assert_nowhere("model: record");
    assert_eq!(
        lines(&replayed, PASSING, "started").len(),
        1,
        "\n{replayed}"
    );
}
