//! `LIVE_CASSETTE=verify` end to end through the relay, with a scripted model as the "real"
//! upstream: a recording, then a second run of the same requests compared with it; drift is
//! reported and fails only when strict; nothing is written either way.

use serde_json::json;

use super::format::Verdict;
use super::relay::Relay;
use super::scenario::verify;
use super::test_support::*;
use crate::model::{Reply, ScriptedModel};

/// Records one tool turn (the call, then the text after it) into `path`.
async fn record(path: &std::path::Path) {
    let (_upstream_slot, upstream) = upstream();
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (mut recording, relay_config) = Side::recording(path, &config);
    upstream
        .reply(Reply::tool_call("bash", json!({"command": "ls"})))
        .reply(Reply::text("listed"));
    let url = chat_url(&relay_config, "real");
    let ws = recording.workspace();
    send(&url, &chat(&ws, "list the files", &["bash"], true))
        .await
        .unwrap();
    send(&url, &chat(&ws, "list the files", &["bash"], true))
        .await
        .unwrap();
    recording.finish(true).unwrap();
}

/// Runs the same two requests against an upstream answering `first` then `second`, and
/// verifies the run (verdict `verdict`) against `path`: the result and the progress lines.
async fn verified(
    path: &std::path::Path,
    first: Reply,
    second: Reply,
    verdict: Verdict,
    strict: bool,
) -> (Result<Option<String>, String>, Vec<String>) {
    let (_upstream_slot, upstream) = upstream();
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (side, relay_config) = Side::recording(path, &config);
    upstream.reply(first).reply(second);
    let url = chat_url(&relay_config, "real");
    let ws = side.workspace();
    for _ in 0..2 {
        send(&url, &chat(&ws, "list the files", &["bash"], true))
            .await
            .unwrap();
    }
    let relay = side
        .slot
        .started()
        .and_then(ScriptedModel::recorded::<Relay>)
        .expect("the relay ran");
    let lines = std::cell::RefCell::new(Vec::new());
    let result = verify(&relay, SCENARIO, path, &verdict, strict, &|line| {
        lines.borrow_mut().push(line.to_owned())
    })
    .map_err(|error| error.to_string());
    (result, lines.into_inner())
}

#[tokio::test]
async fn the_same_behaviour_is_no_drift_and_other_behaviour_fails_only_when_strict() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    record(&path).await;
    let recorded = cassette_text(&path);
    let shown = super::command::display_path(&path);

    // Other words, the same structure: no drift.
    let (result, lines) = verified(
        &path,
        Reply::tool_call("bash", json!({"command": "ls -a"})),
        Reply::text("here they are"),
        Verdict::Passed,
        true,
    )
    .await;
    let line = format!("verify: no drift from {shown}");
    assert_eq!(result, Ok(Some(line.clone())));
    assert_eq!(lines, [line]);

    // Prose instead of the tool call, and a skip: drift, reported; a failure only when strict.
    let skipped = Verdict::Skipped {
        reason: "the model did not call the bash tool".into(),
    };
    let drift = "verdict passed → skipped (the model did not call the bash tool); request 1: \
                 tool call bash (finish: tool_calls) → text (finish: stop)";
    let (result, lines) = verified(
        &path,
        Reply::text("I would rather not"),
        Reply::text("still no"),
        skipped.clone(),
        false,
    )
    .await;
    let line = format!("drift from {shown}: {drift}");
    assert_eq!(result, Ok(Some(line.clone())));
    assert_eq!(lines, std::slice::from_ref(&line));
    let (result, lines) = verified(
        &path,
        Reply::text("I would rather not"),
        Reply::text("still no"),
        skipped,
        true,
    )
    .await;
    assert_eq!(lines, [line]);
    let error = result.unwrap_err();
    assert!(
        error.starts_with(&format!(
            "cassette {shown}: the real model drifted from it: {drift}; record it again with \
             `LIVE_CASSETTE=record cargo test --test "
        )),
        "{error}"
    );
    assert!(
        error.ends_with(" -- t::cassette --exact` (LIVE_STRICT=1 makes drift a failure)"),
        "{error}"
    );
    assert_eq!(
        cassette_text(&path),
        recorded,
        "verifying wrote the cassette"
    );
    let files: Vec<_> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
}
