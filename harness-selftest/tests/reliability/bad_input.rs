//! Bad input gives a clear error naming the thing, never a secret.
//!
//! Each case runs a scenario binary as a child with one bad value: `LIVE_TIMEOUT_SCALE`,
//! `OPENCODE_CONFIG_CONTENT` and `TEST_OLLAMA_MODEL` empty, whitespace-padded, not JSON or not
//! UTF-8; a config naming a model it does not have; two scenarios of one name; a corrupt snapshot
//! file. A canary secret sits in the config (under a provider's `options`) and in a variable
//! named like a secret in every run; it must appear in no output.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::time::Duration;

use harness_runtime::scaled;

use harness_selftest::prerequisites::Test;
use harness_selftest::run::Finished;
use harness_selftest::sandbox::Sandbox;
use harness_selftest::test;

use crate::{DUPLICATES, SCENARIOS};

/// The scenario that reads `OPENCODE_CONFIG_CONTENT` and `TEST_OLLAMA_MODEL`.
const REAL_MODEL: &str = "reliability::bad_input::real_model";
/// The scenario that asserts its evidence.
const SNAPSHOT: &str = "reliability::bad_input::snapshot";
/// The model the good config has.
const MODEL: &str = "canary-model";

fn canary() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("sk-canary-{nanos:x}")
}

/// A config with one provider serving [`MODEL`], its API key the canary.
fn config(canary: &str) -> String {
    format!(
        r#"{{"provider":{{"canary":{{"npm":"@ai-sdk/openai-compatible","options":{{"baseURL":"http://127.0.0.1:9/v1","apiKey":"{canary}"}},"models":{{"{MODEL}":{{"name":"{MODEL}"}}}}}}}}}}"#
    )
}

/// One run of `program args` with `env` (values may be any bytes); checks the canary shows
/// nowhere and prints the outcome as the case's figures.
fn run(
    case: &str,
    program: &str,
    args: &[&str],
    env: Vec<(&str, OsString)>,
    canary: &str,
) -> (Sandbox, Finished) {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(program, args);
    command.env("RELIABILITY_API_KEY", canary);
    for (name, value) in env {
        command.env(name, value);
    }
    let finished = sandbox.run(command, scaled(Duration::from_secs(120)));
    assert!(
        !finished.shows(canary),
        "{case}: the canary secret reached the output\n{finished}"
    );
    // The failure's first line, else the runner's error, else the skip reason.
    let failure = finished
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("---- "))
        .nth(1);
    let error = || finished.stderr.lines().find(|l| l.starts_with("error:"));
    let skip = || {
        finished
            .stdout
            .lines()
            .find(|l| l.contains("... ignored ("))
    };
    let message = failure
        .or_else(error)
        .or_else(skip)
        .unwrap_or("")
        .to_string();
    println!(
        "[figures] {case}: exit={:?}, message={message:?}",
        finished.code
    );
    (sandbox, finished)
}

fn non_utf8(prefix: &str) -> OsString {
    let mut bytes = prefix.as_bytes().to_vec();
    bytes.extend([0xff, 0xfe, b'x']);
    OsString::from_vec(bytes)
}

/// An invalid `LIVE_TIMEOUT_SCALE` stops the runner before any trial (exit 2), naming the
/// variable, the problem and a valid example.
fn a_bad_timeout_scale_is_an_error_before_any_trial() {
    let canary = canary();
    let cases: Vec<(&str, OsString, &str)> = vec![
        ("empty", "".into(), "LIVE_TIMEOUT_SCALE is empty"),
        (
            "padded",
            "  2 ".into(),
            "LIVE_TIMEOUT_SCALE has leading or trailing whitespace",
        ),
        (
            "not a number",
            "abc".into(),
            "LIVE_TIMEOUT_SCALE must be a positive number",
        ),
        (
            "negative",
            "-1".into(),
            "LIVE_TIMEOUT_SCALE must be a positive number",
        ),
        (
            "not UTF-8",
            non_utf8("2"),
            "LIVE_TIMEOUT_SCALE is not valid UTF-8",
        ),
    ];
    for (case, value, message) in cases {
        let (_, finished) = run(
            &format!("LIVE_TIMEOUT_SCALE {case}"),
            SCENARIOS,
            &["--exact", SNAPSHOT],
            vec![("LIVE_TIMEOUT_SCALE", value)],
            &canary,
        );
        assert_eq!(finished.code, Some(2), "{case}\n{finished}");
        finished.assert_shows(&[message, "such as 2 or 1.5"]);
        assert!(
            !finished.stdout.contains("running"),
            "{case}: trials ran\n{finished}"
        );
    }
}

/// A real-model scenario whose `OPENCODE_CONFIG_CONTENT` or `TEST_OLLAMA_MODEL` is unusable is
/// skipped with a reason naming the variable and the problem, and fails under `LIVE_STRICT=1`;
/// the value is never shown.
fn unusable_real_model_variables_skip_naming_the_variable_and_fail_under_strict() {
    let canary = canary();
    let good_config = OsString::from(config(&canary));
    let cases: Vec<(&str, OsString, OsString, &str)> = vec![
        (
            "config empty",
            "".into(),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT is empty",
        ),
        (
            "config only whitespace",
            "   ".into(),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT holds only whitespace",
        ),
        (
            "config padded",
            format!(" {} ", config(&canary)).into(),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT has leading or trailing whitespace",
        ),
        (
            "config not JSON",
            format!("{{not json, \"apiKey\": \"{canary}\"").into(),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT is not a JSON object (syntax error at line 1, column 2)",
        ),
        (
            "config not an object",
            format!("[\"{canary}\"]").into(),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT is not a JSON object (valid JSON, but not an object)",
        ),
        (
            "config not UTF-8",
            non_utf8(&config(&canary)),
            MODEL.into(),
            "OPENCODE_CONFIG_CONTENT is not valid UTF-8",
        ),
        (
            "model empty",
            good_config.clone(),
            "".into(),
            "TEST_OLLAMA_MODEL is empty",
        ),
        (
            "model padded",
            good_config.clone(),
            format!(" {MODEL}\n").into(),
            "TEST_OLLAMA_MODEL has leading or trailing whitespace",
        ),
        (
            "model not UTF-8",
            good_config.clone(),
            non_utf8(MODEL),
            "TEST_OLLAMA_MODEL is not valid UTF-8",
        ),
    ];
    for (case, config, model, message) in cases {
        for strict in [false, true] {
            let mut env = vec![
                ("OPENCODE_CONFIG_CONTENT", config.clone()),
                ("TEST_OLLAMA_MODEL", model.clone()),
            ];
            if strict {
                env.push(("LIVE_STRICT", "1".into()));
            }
            let case = format!("{case}{}", if strict { ", strict" } else { "" });
            let (sandbox, finished) = run(&case, SCENARIOS, &["--exact", REAL_MODEL], env, &canary);
            finished.assert_shows(&[message, "set it to run this scenario"]);
            if strict {
                assert_eq!(finished.code, Some(101), "{case}\n{finished}");
                finished.assert_result(REAL_MODEL, "FAILED");
                finished.assert_shows(&["LIVE_STRICT=1"]);
            } else {
                assert_eq!(finished.code, Some(0), "{case}\n{finished}");
                finished.assert_result(REAL_MODEL, "ignored");
            }
            assert!(sandbox.roots().is_empty(), "{case}: {:?}", sandbox.roots());
        }
    }
}

/// A config whose providers lack `TEST_OLLAMA_MODEL`: the scenario fails before anything starts,
/// naming the model, the variables and the models found — not the provider's key.
fn a_model_the_config_does_not_have_fails_naming_it_and_the_models_found() {
    let canary = canary();
    let (sandbox, finished) = run(
        "model not in the config",
        SCENARIOS,
        &["--exact", REAL_MODEL],
        vec![
            ("OPENCODE_CONFIG_CONTENT", config(&canary).into()),
            ("TEST_OLLAMA_MODEL", "no-such-model".into()),
        ],
        &canary,
    );
    assert_eq!(finished.code, Some(101), "\n{finished}");
    finished.assert_result(REAL_MODEL, "FAILED");
    finished.assert_shows(&[
        "the model `no-such-model` named by TEST_OLLAMA_MODEL is not among the models of \
             OPENCODE_CONFIG_CONTENT's providers (found: canary: [canary-model])",
        "add it under provider.<id>.models or fix TEST_OLLAMA_MODEL",
    ]);
    assert!(sandbox.roots().is_empty(), "{:?}", sandbox.roots());
}

/// Two scenarios of one name: the runner refuses to run (also to list), naming both places.
fn two_scenarios_of_one_name_stop_the_runner_naming_both() {
    let canary = canary();
    for args in [&[][..], &["--list"][..]] {
        let (_, finished) = run("duplicate names", DUPLICATES, args, vec![], &canary);
        assert_eq!(finished.code, Some(101), "\n{finished}");
        finished.assert_shows(&[
            "error: two scenarios are named `twice::same`",
            "src/bin/selftest-duplicates.rs:",
            "rename one of each pair",
        ]);
        assert!(
            !finished.stdout.contains("running") && !finished.stdout.contains(": test"),
            "trials ran or were listed\n{finished}"
        );
    }
}

/// A corrupt accepted snapshot (garbage, a header cut short, not UTF-8) fails the scenario with
/// a message naming the file, the problem and what to do, in CI and outside it; the corrupt
/// file is left as it was (insta alone took it for "no snapshot yet" and reported a mismatch).
fn a_corrupt_snapshot_fails_naming_the_file() {
    let canary = canary();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "garbage",
            b"\x00\x01 this is not a snapshot {{{ ::: ---".to_vec(),
            "it does not start with insta's `---` header",
        ),
        (
            "truncated header",
            b"---\nsource: tests/reliability\nexpr".to_vec(),
            "its header is cut short: no closing `---`",
        ),
        (
            "not UTF-8",
            vec![0xff, 0xfe, 0xfd, b'\n', b'-', b'-', b'-'],
            "it is not valid UTF-8",
        ),
    ];
    for (case, bytes, reason) in cases {
        for ci in [false, true] {
            let snapshots = tempfile::tempdir().unwrap();
            let file = snapshots
                .path()
                .join("reliability__bad_input__snapshot.snap");
            std::fs::write(&file, &bytes).unwrap();
            let mut env = vec![("LIVE_SNAPSHOT_DIR", snapshots.path().as_os_str().to_owned())];
            if ci {
                env.push(("CI", "true".into()));
            }
            let case = format!("corrupt snapshot: {case}{}", if ci { ", CI" } else { "" });
            let (_, finished) = run(&case, SCENARIOS, &["--exact", SNAPSHOT], env, &canary);
            assert_eq!(finished.code, Some(101), "{case}\n{finished}");
            finished.assert_result(SNAPSHOT, "FAILED");
            finished.assert_shows(&[
                "the accepted snapshot `$LIVE_SNAPSHOT_DIR/reliability__bad_input__snapshot.snap` \
                     of `reliability::bad_input::snapshot` is corrupt",
                reason,
                "restore it from version control, or delete it",
            ]);
            assert_eq!(
                std::fs::read(&file).unwrap(),
                bytes,
                "{case}: the file changed"
            );
        }
    }
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(a_bad_timeout_scale_is_an_error_before_any_trial),
        test!(unusable_real_model_variables_skip_naming_the_variable_and_fail_under_strict),
        test!(a_model_the_config_does_not_have_fails_naming_it_and_the_models_found),
        test!(two_scenarios_of_one_name_stop_the_runner_naming_both),
        test!(a_corrupt_snapshot_fails_naming_the_file),
    ]
}
