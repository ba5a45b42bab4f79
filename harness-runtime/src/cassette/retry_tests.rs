//! The relay's retries against a scripted upstream: a 429 or 5xx is asked again and only the
//! answer after it is recorded; one that stays refused goes to the client unrecorded, and the
//! relay says it gave up; a 4xx is never retried; asked for errors as they come, nothing is.

use serde_json::json;

use super::format::RecordedResponse;
use super::relay::Relay;
use super::test_support::*;
use crate::model::{Reply, ScriptedModel};

fn rate_limited() -> Reply {
    Reply::http_error(429, json!({"error": {"message": "slow down"}}))
}

/// The statuses `side` recorded, in order.
fn recorded(side: &Side) -> Vec<u16> {
    let relay = side
        .slot
        .started()
        .and_then(ScriptedModel::recorded::<Relay>)
        .expect("a relay");
    relay
        .interactions()
        .iter()
        .map(|i| match &i.response {
            RecordedResponse::Body { status, .. } | RecordedResponse::Stream { status, .. } => {
                *status
            }
            RecordedResponse::Dropped { .. } => 0,
        })
        .collect()
}

#[tokio::test]
async fn a_retried_error_is_never_recorded_and_one_given_up_on_is_reported() {
    let (_upstream_slot, upstream) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (recording, relay_config) = Side::recording(&cassette_path(dir.path()), &config);
    let ws = recording.workspace();
    let url = chat_url(&relay_config, "real");
    upstream
        .reply(rate_limited().with_retry_after_ms(5))
        .reply(Reply::http_error(503, "busy").with_retry_after_ms(5))
        .reply(Reply::text("answered after two errors"));
    let answered = send(&url, &chat(&ws, "one", &[], true)).await.unwrap();
    assert_eq!(answered.status, 200);
    assert_eq!(upstream.requests().len(), 3);
    assert_eq!(recorded(&recording), [200]);

    // A 400 is the model's answer: relayed and recorded at once.
    upstream.reply(Reply::http_error(400, json!({"error": {"message": "bad"}})));
    let refused = send(&url, &chat(&ws, "two", &[], true)).await.unwrap();
    assert_eq!((refused.status, upstream.requests().len()), (400, 4));
    assert_eq!(recorded(&recording), [200, 400]);
    let relay = recording
        .slot
        .started()
        .and_then(ScriptedModel::recorded::<Relay>)
        .unwrap();
    assert_eq!(relay.gave_up(), None);

    // Five 429s: four retries, then the last goes to the client, and nothing is recorded.
    for _ in 0..5 {
        upstream.reply(rate_limited().with_retry_after_ms(1));
    }
    let limited = send(&url, &chat(&ws, "three", &[], true)).await.unwrap();
    assert_eq!((limited.status, upstream.requests().len()), (429, 9));
    assert_eq!(recorded(&recording), [200, 400]);
    let gave_up = relay.gave_up().expect("the relay gave up");
    assert!(
        gave_up.starts_with(
            "the upstream rate-limited this scenario 5 times (429 for 1 request(s), each retried \
             up to 4 times"
        ),
        "{gave_up}"
    );
}

#[tokio::test]
async fn asked_for_errors_as_they_come_the_relay_retries_nothing() {
    let (_upstream_slot, upstream) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (recording, relay_config) = Side::recording(&cassette_path(dir.path()), &config);
    recording.slot.record_upstream_errors();
    let url = chat_url(&relay_config, "real");
    upstream
        .reply(rate_limited().with_retry_after_ms(1))
        .reply(Reply::text("not asked for"));
    let limited = send(&url, &chat(&recording.workspace(), "one", &[], true))
        .await
        .unwrap();
    assert_eq!((limited.status, upstream.requests().len()), (429, 1));
    assert_eq!(recorded(&recording), [429]);
}
