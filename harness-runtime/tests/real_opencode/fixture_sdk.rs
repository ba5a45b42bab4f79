//! The official SDK (`@opencode-ai/sdk` 1.18.33, installed by `npm ci` as a dev dependency)
//! against the fixture agent. A node script (`fixture_sdk/drive.mjs`) drives the agent through
//! the SDK's v2 client, the one the real CLI uses (and, briefly, the package's default v1
//! client), and prints one JSON line per check; this test runs it phase by phase (injecting the
//! turn faults that make a turn ask) and asserts every check, once against the agent and once
//! through a forwarder in front of it (as a product under test reaches an agent), which must
//! change nothing. Without node or the SDK it is skipped with the reason, and fails under `CI`
//! or `LIVE_STRICT=1`.

use crate::fixture_common;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use fixture_common::*;
use harness_runtime::fixture::{Fault, FixtureControl};
use harness_runtime::testing::Forwarder;
use harness_selftest::prerequisites::{self, Prerequisite::NodePackage, Test};
use harness_selftest::test;
use serde_json::Value;

/// The SDK's npm package.
const SDK: &str = "@opencode-ai/sdk";

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(fixture_sdk_drives_sessions_prompts_events_permissions_questions_and_abort)
            .needs(NodePackage(SDK)),
        test!(the_sdk_drives_the_same_through_a_forwarder).needs(NodePackage(SDK)),
        test!(a_test_without_node_is_skipped_and_fails_under_ci_or_strict),
    ]
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The checks each phase must report, in order.
const PHASES: [(&str, &[&str]); 5] = [
    (
        "basics",
        &[
            "session.create",
            "session.create.directory_decoded",
            "session.get",
            "session.list",
            "session.list.roots",
            "session.list.limit",
            "session.list.search",
            "session.prompt.blocking",
            "session.prompt_async.events_until_idle",
            "events.scoped_by_directory",
            "session.messages",
        ],
    ),
    ("permission", &["permission.asked_listed_replied"]),
    ("abort", &["session.abort"]),
    ("question", &["question.asked_answered"]),
    (
        "v1",
        &[
            "v1.session.create",
            "v1.session.get_and_list",
            "v1.session.prompt",
        ],
    ),
];

/// Runs one phase of the script; returns its checks `(name, ok, detail)` with volatile values
/// redacted.
async fn run_phase(phase: &str, base: &str, a: &Path, b: &Path) -> Vec<(String, bool, String)> {
    let script = workspace_root().join("harness-runtime/tests/fixture_sdk/drive.mjs");
    let child = tokio::process::Command::new("node")
        .arg(script)
        .args([phase, base])
        .args([a, b])
        .env(
            "FIXTURE_SDK_CEILING_MS",
            ceiling(5.0).as_millis().to_string(),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start node");
    // Each check has a ceiling of twice FIXTURE_SDK_CEILING_MS in the script: a phase ends.
    let within = ceiling(90.0);
    let output = tokio::time::timeout(within, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the SDK phase {phase} did not end within {within:?}"))
        .expect("the node script's output");
    let redact = |text: &str| {
        text.replace(base, "<fixture-url>")
            .replace(&*a.to_string_lossy(), "<dir-a>")
            .replace(&*b.to_string_lossy(), "<dir-b>")
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK phase {phase} exited with {:?}; stdout: {}; stderr: {}",
        output.status.code(),
        redact(&stdout),
        redact(&String::from_utf8_lossy(&output.stderr))
    );
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let check: Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("not a check line: {}", redact(line)));
            (
                check["check"].as_str().unwrap_or_default().to_string(),
                check["ok"] == true,
                redact(check["detail"].as_str().unwrap_or_default()),
            )
        })
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_sdk_drives_sessions_prompts_events_permissions_questions_and_abort() {
    drive(false).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_drives_the_same_through_a_forwarder() {
    drive(true).await
}

/// Runs every phase against the fixture agent, through a forwarder in front of it if
/// `forwarded`.
async fn drive(forwarded: bool) {
    let home = tempfile::tempdir().unwrap();
    let dirs = tempfile::tempdir().unwrap();
    let (a, b) = (dirs.path().join("a"), dirs.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let control = FixtureControl::attached_to(home.path()).unwrap();
    let agent = Agent::ready(home.path());
    let forwarder = forwarded.then(|| Forwarder::start(&agent.base).expect("start the forwarder"));
    let base = forwarder
        .as_ref()
        .map_or(agent.base.clone(), Forwarder::url);

    let mut failures = Vec::new();
    for (phase, expected) in PHASES {
        match phase {
            "permission" | "abort" => control.inject(Fault::Decide).unwrap(),
            "question" => {
                control.clear(&Fault::Decide).unwrap();
                control.inject(Fault::AskQuestion).unwrap();
            }
            "v1" => control.clear(&Fault::AskQuestion).unwrap(),
            _ => {}
        }
        let checks = run_phase(phase, &base, &a, &b).await;
        let names: Vec<&str> = checks.iter().map(|(n, _, _)| n.as_str()).collect();
        if names != expected {
            failures.push(format!(
                "{phase}: reported checks {names:?}, expected {expected:?}"
            ));
        }
        for (name, ok, detail) in &checks {
            if !ok {
                failures.push(format!("{phase}: {name} failed: {detail}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the SDK against the fixture agent{}:\n{}",
        if forwarded {
            " through a forwarder"
        } else {
            ""
        },
        failures.join("\n")
    );
}

/// Where node is missing (here: `PATH` holds nothing), the SDK test is skipped with the reason,
/// flagged ignored when listed (for nextest), and failed under `CI` or `LIVE_STRICT=1`, without
/// running.
fn a_test_without_node_is_skipped_and_fails_under_ci_or_strict() {
    let empty = tempfile::tempdir().unwrap();
    prerequisites::assert_skipped_without(
        "fixture_sdk::fixture_sdk_drives_sessions_prompts_events_permissions_questions_and_abort",
        "node is not on PATH",
        |command| {
            command.env("PATH", empty.path());
        },
    );
}
