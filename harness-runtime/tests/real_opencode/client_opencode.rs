//! The client against a real `opencode serve` provisioned by the harness, with a scripted model
//! that answers nothing in time: every call of the API, including its error paths.

use std::time::Duration;

use crate::support;

use harness_runtime::client::{ClientError, CreateSession, Event, PermissionAction, Prompt};
use harness_runtime::model::{Matcher, Reply, Rule};
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::test;
use serde_json::json;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![test!(client_against_real_opencode).needs(OpenCode)]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn client_against_real_opencode() {
    let mut live = support::live("client::against_real_opencode");
    // Every model call fails with a retryable 503: turns stay busy in `retry` until aborted.
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::http_error(
            503,
            json!({"error": {"message": "overloaded"}}),
        )));
    let agent = support::start(&mut live).await.expect("provision opencode");
    let client = agent.client();

    let health = client.health().await.expect("health");
    assert!(health.healthy);
    assert_eq!(health.version, "1.18.33");

    // The subscription's first frame is server.connected (checked inside subscribe).
    let mut events = client.subscribe().await.expect("subscribe");

    let created = client
        .create_session(&CreateSession::titled("client test").rule(
            "bash",
            "*",
            PermissionAction::Ask,
        ))
        .await
        .expect("create");
    assert!(created.id().starts_with("ses_"));
    assert_eq!(created.info().title, "client test");

    // The subscription sees it.
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionCreated { session_id, .. }) if session_id == created.id() => break,
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }

    let fetched = client.get_session(created.id()).await.expect("get");
    assert_eq!(fetched.id, created.id());
    let listed = client.list_sessions().await.expect("list");
    assert!(listed.iter().any(|s| s.id == created.id()));
    assert!(created.messages().await.expect("messages").is_empty());

    let missing = client
        .get_session("ses_doesnotexist000000000000")
        .await
        .unwrap_err();
    assert_eq!(missing.status(), Some(404), "{missing}");
    assert_eq!(missing.error_name(), Some("NotFoundError"), "{missing}");
    assert!(missing.is_not_found());

    assert!(
        client.statuses().await.expect("statuses").is_empty(),
        "all idle"
    );
    assert!(client.permissions().await.expect("permissions").is_empty());
    assert!(client.questions().await.expect("questions").is_empty());
    assert!(created.abort().await.expect("abort on idle"));

    // A reply to an unknown permission is a typed 404, not a fallback success.
    let err = client
        .reply_permission(
            created.id(),
            "per_unknown",
            harness_runtime::client::PermissionReply::Once,
            None,
        )
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");

    // A turn whose model keeps failing: retries; abort it once the first retry shows, then the
    // turn completes (idle) with no error.
    let session = created.clone();
    let turn = tokio::spawn(async move {
        session
            .prompt_with(Prompt::new("hello").with_ceiling(Duration::from_secs(90)))
            .await
    });
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionStatus { session_id, status }) if session_id == created.id() => {
                if matches!(status, harness_runtime::client::SessionStatus::Retry { .. }) {
                    break;
                }
            }
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }
    assert!(created.abort().await.expect("abort"));
    let turn = turn.await.unwrap().expect("aborted turn collected");
    assert_eq!(turn.messages.len(), 1, "{turn:?}");
    assert!(turn.messages[0].info.time.completed.is_some());
    assert!(turn.trace.iter().any(|t| t == "session.status"));

    // A format prompt makes the message list unavailable: typed error, no 400 surprise.
    let structured = client
        .create_session(&CreateSession::titled("structured"))
        .await
        .unwrap();
    let s2 = structured.clone();
    let pending = tokio::spawn(async move {
        s2.prompt_with(
            Prompt::new("x")
                .json_schema(json!({"type":"object","properties":{"a":{"type":"string"}}}))
                .with_ceiling(Duration::from_secs(90)),
        )
        .await
    });
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionStatus { session_id, .. }) if session_id == structured.id() => break,
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }
    assert!(matches!(
        structured.messages().await,
        Err(ClientError::MessagesUnavailableAfterStructuredPrompt { .. })
    ));
    structured.abort().await.unwrap();
    let _ = pending.await.unwrap().expect("aborted structured turn");

    assert!(created.delete().await.expect("delete"));
    assert!(
        client
            .get_session(created.id())
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(client.dispose().await.expect("dispose"));
    // As the runner does after a pass: stop the agent and remove its root.
    harness_runtime::testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}
