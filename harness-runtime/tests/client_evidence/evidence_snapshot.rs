//! `live.assert_evidence()` end to end: written, matched, mismatched under CI, pending for
//! review, and named, each in a child process (insta reads `INSTA_UPDATE`/`CI` from the
//! environment once per process, and this crate cannot set env vars in-process).
//!
//! The child is the ignored test `child_asserts_evidence` of this same binary, run with `--exact`
//! and `--ignored`; it asserts from a worker thread of a multi-thread tokio runtime. Snapshots go
//! to a temp dir standing in for the test crate's manifest dir, so the repo gets no snapshot
//! files.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::Live;
use harness_runtime::evidence::{
    EventTrace, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary, counters,
};
use harness_runtime::testing::ScenarioInfo;
use serde_json::json;

const CHILD_DIR: &str = "EVIDENCE_TEST_CHILD_DIR";
const CHILD_MARKER: &str = "EVIDENCE_TEST_CHILD_MARKER";
const CHILD_NAMED: &str = "EVIDENCE_TEST_CHILD_NAMED";
const SECRET: &str = "sk-test-9f8e7d6c5b4a";

/// Runs in the child only (it returns at once without `EVIDENCE_TEST_CHILD_DIR`): ignored, so a
/// plain run does not report it passed having checked nothing.
#[test]
#[ignore = "entry point: run in a child process by the tests of this file"]
fn child_asserts_evidence() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let marker = std::env::var(CHILD_MARKER).expect("the parent sets the marker");
    let named = std::env::var(CHILD_NAMED).ok();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let task = tokio::spawn(async move {
            let live = harness_runtime::testing::live(ScenarioInfo {
                name: "topic::records".into(),
                options: ScenarioOptions::DEFAULT,
                manifest_dir: PathBuf::from(&dir),
                snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
            });
            record(&live, &dir, &marker);
            match named {
                Some(name) => live.assert_evidence_named(&name),
                None => live.assert_evidence(),
            }
        });
        if let Err(error) = task.await {
            std::panic::resume_unwind(error.into_panic());
        }
    });
}

fn record(live: &Live, crate_dir: &str, marker: &str) {
    live.secret(SECRET);
    // A scenario root lives apart from the test crate (which the redactor shows as `[crate]`).
    let dir = format!("{crate_dir}/scenario-root");
    live.redactor().add_path(Path::new(&dir), "[root]");
    let session = "ses_dd712ea10ffe0CmPyaB6dhvd7G";
    live.evidence().record("marker", marker);
    live.evidence()
        .record("prompt", format!("say hello in {session} with {SECRET}"));
    live.evidence().record_section(
        "session",
        &json!({
            "id": session,
            "directory": format!("{dir}/workspace"),
            "time": {"created": 1795982956015u64},
            "cost": 0.25,
        }),
    );
    live.evidence().count(counters::PROMPTS);
    let mut events = vec!["session.status", "message.updated"];
    events.extend(std::iter::repeat_n("message.part.delta", 12));
    events.push("session.idle");
    let mut summary = TurnSummary::default();
    summary.events = EventTrace::from_types(events);
    summary.messages = vec![
        MessageSummary::new("user", vec!["text".into()]),
        MessageSummary::new(
            "assistant",
            vec!["step-start".into(), "tool".into(), "step-finish".into()],
        ),
    ];
    summary.tool_calls = vec![ToolCallSummary::new("bash", "completed")];
    summary.interactions = vec![InteractionSummary::new(
        "permission",
        "bash",
        Some("once".into()),
    )];
    summary.structured_output = Some(json!({"answer": 42}));
    live.evidence().record_turn_summary(&summary);
    live.evidence().count("prompts");
}

/// Runs the child with a clean insta environment plus `env`, under a ceiling.
fn run_child(dir: &Path, marker: &str, named: Option<&str>, env: &[(&str, &str)]) -> Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut command = tokio::process::Command::new(std::env::current_exe().unwrap());
        command
            .args([
                "--exact",
                "evidence_snapshot::child_asserts_evidence",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_DIR, dir)
            .env(CHILD_MARKER, marker)
            .kill_on_drop(true);
        // The parent may itself run under `cargo insta test` or CI: none of it may leak in.
        for var in [
            "CI",
            "INSTA_UPDATE",
            "INSTA_FORCE_PASS",
            "INSTA_OUTPUT",
            "INSTA_PENDING_DIR",
            "INSTA_WORKSPACE_ROOT",
            "INSTA_REQUIRE_FULL_MATCH",
            "INSTA_GLOB_FILTER",
            CHILD_NAMED,
        ] {
            command.env_remove(var);
        }
        if let Some(name) = named {
            command.env(CHILD_NAMED, name);
        }
        for (k, v) in env {
            command.env(k, v);
        }
        tokio::time::timeout(Duration::from_secs(120), command.output())
            .await
            .expect("the child test finishes within 120 s")
            .expect("the child test starts")
    })
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("snapshots"))
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn snapshot_written_matched_mismatched_and_pending() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let snap = dir.join("snapshots/topic__records.snap");

    // 1. INSTA_UPDATE=always writes the snapshot.
    let out = run_child(dir, "first", None, &[("INSTA_UPDATE", "always")]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(files(dir), ["topic__records.snap"]);
    let written = std::fs::read_to_string(&snap).unwrap();
    eprintln!("--- written snapshot ---\n{written}");
    for expected in [
        "description: \"evidence of the live scenario `topic::records`\"",
        "scenario: \"topic::records\"",
        "- marker: first",
        "[session-1]",
        "with [secret]",
        "directory: \"[root]/workspace\"",
        "created: \"[timestamp]\"",
        "cost: \"[cost]\"",
        "message.part.delta ×12",
        "- counters:\n    prompts: 2",
    ] {
        assert!(written.contains(expected), "{expected:?} in\n{written}");
    }
    assert!(!written.contains(SECRET));
    assert!(!written.contains(&dir.display().to_string()));
    assert!(!written.contains("expression:"), "{written}");
    // `source` is the file the context was made in (by `snapshot_assertion!()`), not the
    // runtime's, relative to the workspace.
    assert!(
        written.contains("\nsource: harness-runtime/tests/client_evidence/evidence_snapshot.rs\n"),
        "{written}"
    );
    // Recording order is kept: the marker comes first, the counters last.
    let at = |needle: &str| written.find(needle).unwrap();
    assert!(at("- marker:") < at("- prompt:") && at("- turn:") < at("- counters:"));

    // 2. The same evidence matches, with updates off: nothing is rewritten.
    let out = run_child(dir, "first", None, &[("INSTA_UPDATE", "no")]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&snap).unwrap(), written);

    // 3. Under CI a mismatch fails with the diff and writes nothing.
    let out = run_child(dir, "second", None, &[("CI", "true")]);
    let printed = text(&out);
    eprintln!("--- CI mismatch output ---\n{printed}");
    assert!(!out.status.success(), "{printed}");
    assert!(
        printed.contains("first") && printed.contains("second"),
        "{printed}"
    );
    assert!(
        printed.contains(
            "the evidence of `topic::records` does not match `snapshots/topic__records.snap`"
        ),
        "{printed}"
    );
    assert!(!printed.contains(SECRET), "{printed}");
    assert_eq!(files(dir), ["topic__records.snap"]);
    assert_eq!(std::fs::read_to_string(&snap).unwrap(), written);

    // 4. Outside CI (INSTA_UPDATE=auto → new) a mismatch fails and leaves `.snap.new` for review.
    let out = run_child(dir, "second", None, &[]);
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        files(dir),
        ["topic__records.snap", "topic__records.snap.new"]
    );
    let pending = std::fs::read_to_string(dir.join("snapshots/topic__records.snap.new")).unwrap();
    assert!(pending.contains("- marker: second"), "{pending}");

    // 5. What `cargo insta test` sets: pass, keep the pending snapshot.
    std::fs::remove_file(dir.join("snapshots/topic__records.snap.new")).unwrap();
    let out = run_child(
        dir,
        "second",
        None,
        &[("INSTA_UPDATE", "new"), ("INSTA_FORCE_PASS", "1")],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        files(dir),
        ["topic__records.snap", "topic__records.snap.new"]
    );

    // 6. Accepting (what `cargo insta accept` does: rename) makes it match.
    std::fs::rename(dir.join("snapshots/topic__records.snap.new"), &snap).unwrap();
    let out = run_child(dir, "second", None, &[("INSTA_UPDATE", "no")]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn named_snapshots_get_their_own_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = run_child(dir, "x", Some("after abort"), &[("INSTA_UPDATE", "always")]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(files(dir), ["topic__records@after_abort.snap"]);
}
