//! Rate limits with real OpenCode and no real model: the `rate_limits::` scenarios of
//! `selftest-scenarios` against a scripted upstream this process runs (as `tests/runs/cassettes`
//! does). A recording answered 429 once is retried and passes with no 429 in its cassette; one
//! the upstream always rate-limits fails saying so, with nothing of it recorded; a live turn goes
//! through the relay and is retried too; and live-model scenarios run at most
//! `LIVE_MODEL_CONCURRENCY` at once, measured from the times their bodies wrote, while the
//! scripted ones of the same run are not held behind them.

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_runtime::testing::MODEL_ID;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::rate_limits::{self as case, TIMES_DIR, most_at_once, read_times};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::run_sandboxed;
use harness_selftest::test;
use harness_selftest::upstream::ScriptedUpstream;
use serde_json::Value;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
/// The live-model timing scenarios.
const LIVE: [&str; 3] = ["live_hold_a", "live_hold_b", "live_turn_after_a_429"];
/// The scripted timing scenarios.
const SCRIPTED: [&str; 4] = [
    "scripted_hold_1",
    "scripted_hold_2",
    "scripted_hold_3",
    "scripted_hold_4",
];

pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(a_429_while_recording_is_retried_and_never_recorded).needs(OpenCode),
        test!(live_model_scenarios_run_at_most_n_at_once).needs(OpenCode),
    ]
}

/// `OPENCODE_CONFIG_CONTENT` naming `upstream` as an OpenAI-compatible provider.
fn config(upstream: &ScriptedUpstream) -> String {
    upstream
        .config("Rate-limit upstream", "rate-limit-test-key")
        .to_string()
}

/// The requests `upstream` received whose last user text holds `prompt`.
fn asked(upstream: &ScriptedUpstream, prompt: &str) -> usize {
    upstream
        .model()
        .requests()
        .iter()
        .filter(|r| {
            r.last_user_text
                .as_deref()
                .is_some_and(|t| t.contains(prompt))
        })
        .count()
}

/// Runs `args` of the scenario binary with `env` and nothing else of this process's settings.
fn run(args: &[&str], env: &[(&str, &str)]) -> Finished {
    // No scenario here shares a server: none is warmed for nothing.
    let env = [&[("LIVE_ISOLATION", "server")], env].concat();
    run_sandboxed(SCENARIOS, args, &env, scaled(RUN_CEILING))
}

/// The HTTP statuses of a cassette's recorded responses.
fn statuses(path: &Path) -> Vec<u64> {
    let cassette: Value = harness_runtime::testing::read_cassette(path)
        .unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
    cassette["interactions"]
        .as_array()
        .expect("interactions")
        .iter()
        .map(|i| i["response"]["status"].as_u64().unwrap_or(0))
        .collect()
}

/// Recording: a 429 with `Retry-After: 1` is waited out and retried, the scenario passes and its
/// cassette holds the answer only. An upstream that keeps answering 429 exhausts the retries:
/// the scenario fails saying the upstream rate-limited it, and its pending cassette holds no 429.
fn a_429_while_recording_is_retried_and_never_recorded() {
    let cassettes = tempfile::tempdir().unwrap();
    let upstream = ScriptedUpstream::start(case::script_upstream);
    let config = config(&upstream);
    let dir = cassettes.path().to_str().unwrap();
    let finished = run(
        &["--test-threads", "2", "rate_limits::re", "rate_limits::al"],
        &[
            ("LIVE_CASSETTE", "record"),
            ("LIVE_CASSETTE_DIR", dir),
            ("LIVE_MODEL_CONCURRENCY", "2"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL_ID),
        ],
    );
    let passing = "rate_limits::recorded_after_a_429";
    finished
        .assert_result(passing, "ok")
        .assert_stderr(&format!(
            "[live] {passing}: model: upstream answered 429, retrying in 1s (1 of 4)\n"
        ))
        .assert_stderr(&format!(
            "[live] {passing}: cassette written: $LIVE_CASSETTE_DIR/rate_limits__recorded_after_a_429.json\n"
        ));
    let recorded = statuses(
        &cassettes
            .path()
            .join("rate_limits__recorded_after_a_429.json"),
    );
    assert!(
        !recorded.is_empty() && recorded.iter().all(|s| *s == 200),
        "the cassette holds {recorded:?}\n{finished}"
    );
    // The 429 and its retry reached the upstream; only the retry's answer was recorded.
    assert_eq!(
        asked(&upstream, case::RECORDED_AFTER_429),
        recorded.len() + 1,
        "{finished}"
    );

    let failing = "rate_limits::always_rate_limited";
    finished
        .assert_result(failing, "FAILED")
        .assert_stderr(&format!(
            "[live] {failing}: model: upstream answered 429, retrying in 1ms (4 of 4)\n"
        ))
        .assert_stderr(&format!(
            "[live] {failing}: model: upstream answered 429 5 time(s); no more retries, \
             relaying it to OpenCode (not recorded)\n"
        ))
        .assert_stdout("then the upstream rate-limited this scenario ")
        .assert_stdout("lower LIVE_MODEL_CONCURRENCY");
    let asked = asked(&upstream, case::ALWAYS_429);
    assert!(
        asked >= 5 && asked % 5 == 0,
        "each request OpenCode sent was asked 5 times: {asked}\n{finished}"
    );
    let errors = asked.to_string();
    finished.assert_stdout(&format!(
        "the upstream rate-limited this scenario {errors} times (429 for {} request(s)",
        asked / 5
    ));
    let pending = cassettes
        .path()
        .join("rate_limits__always_rate_limited.json.pending");
    let recorded = statuses(&pending);
    assert!(
        recorded.iter().all(|s| *s != 429),
        "a 429 was recorded: {recorded:?}\n{finished}"
    );
}

/// `LIVE_MODEL_CONCURRENCY=1`, then `2`, with four test threads: the live-model scenarios'
/// bodies never overlap more than that (and do reach it), the scripted ones all end before the
/// live ones are done, and a waiting one says what it waits for. The live turn goes through the
/// relay, which retries its 429.
fn live_model_scenarios_run_at_most_n_at_once() {
    let upstream = ScriptedUpstream::start(case::script_upstream);
    let config = config(&upstream);
    // The second run leaves the live turn out: the cap is what it measures, not OpenCode again.
    for (cap, skip) in [(1, "rate_limits::always"), (2, "rate_limits::live_turn")] {
        let times = tempfile::tempdir().unwrap();
        let cap_text = cap.to_string();
        let finished = run(
            &[
                "--test-threads",
                "4",
                "rate_limits::",
                "--skip",
                "rate_limits::recorded",
                "--skip",
                "rate_limits::always",
                "--skip",
                skip,
            ],
            &[
                ("LIVE_MODEL_CONCURRENCY", &cap_text),
                (TIMES_DIR, times.path().to_str().unwrap()),
                ("OPENCODE_CONFIG_CONTENT", &config),
                ("TEST_OLLAMA_MODEL", MODEL_ID),
            ],
        );
        finished.assert_code(0);
        let all = read_times(times.path());
        let spans = |names: &[&str]| -> Vec<(u128, u128)> {
            all.iter()
                .filter(|(name, ..)| names.contains(&name.as_str()))
                .map(|(_, start, end)| (*start, *end))
                .collect()
        };
        let live = spans(&LIVE);
        let scripted = spans(&SCRIPTED);
        let expected_live = if cap == 1 { 3 } else { 2 };
        assert_eq!(
            (live.len(), scripted.len()),
            (expected_live, 4),
            "{all:?}\n{finished}"
        );
        assert_eq!(
            most_at_once(&live),
            cap,
            "live-model bodies at once, LIVE_MODEL_CONCURRENCY={cap}: {all:?}\n{finished}"
        );
        let last_scripted_end = scripted.iter().map(|s| s.1).max().unwrap();
        let last_live_end = live.iter().map(|s| s.1).max().unwrap();
        assert!(
            last_scripted_end < last_live_end,
            "scripted scenarios waited behind live ones: {all:?}\n{finished}"
        );
        if cap == 1 {
            // One live scenario at a time from the start; every scripted one ended before the
            // second live one started.
            let mut starts: Vec<u128> = live.iter().map(|s| s.0).collect();
            starts.sort();
            assert!(
                last_scripted_end < starts[1],
                "scripted scenarios waited behind live ones: {all:?}\n{finished}"
            );
            finished
                .assert_stderr(": waiting for a live-model slot (1 of 1 busy: rate_limits::")
                .assert_stderr("; LIVE_MODEL_CONCURRENCY=1)\n")
                .assert_stderr(": got a live-model slot after ")
                .assert_stderr(
                    "[live] rate_limits::live_turn_after_a_429: model: upstream answered 429, \
                     retrying in 1s (1 of 4)\n",
                );
            assert_eq!(asked(&upstream, case::LIVE_AFTER_429), 2, "{finished}");
        }
    }
}
