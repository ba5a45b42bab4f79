//! The request headers the relay forwards: those of its allow-list reach the upstream as OpenCode
//! sent them; OpenCode's dummy key, in any of the providers' key headers, never does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::json;

use super::relay::FORWARDED_HEADERS;
use super::test_support::*;

/// The key OpenCode holds for the relay (the replay config's placeholder, say).
const DUMMY_KEY: &str = "dummy-key-from-opencode";

/// A plain HTTP upstream answering every chat request with a whole completion; returns its base
/// URL and the headers of every request it received.
async fn capturing_upstream() -> (String, Arc<Mutex<Vec<HeaderMap>>>) {
    let seen: Arc<Mutex<Vec<HeaderMap>>> = Arc::default();
    let captured = Arc::clone(&seen);
    let app = axum::Router::new().route(
        "/v1/chat/completions",
        post(move |headers: HeaderMap| {
            let captured = Arc::clone(&captured);
            async move {
                captured.lock().unwrap().push(headers);
                axum::Json(json!({
                    "id": "chatcmpl-1", "object": "chat.completion", "created": 0,
                    "model": "scripted-model",
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": "hi"}}],
                }))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}/v1"), seen)
}

#[tokio::test]
async fn allowed_headers_reach_the_upstream_and_opencodes_dummy_key_does_not() {
    let (base, seen) = capturing_upstream().await;
    let dir = tempfile::tempdir().unwrap();
    let config = user_config(&base, "@ai-sdk/openai-compatible");
    let (mut recording, relay_config) = Side::recording(&cassette_path(dir.path()), &config);
    let ws = recording.workspace();
    let response = reqwest::Client::new()
        .post(chat_url(&relay_config, "real"))
        .header("authorization", format!("Bearer {DUMMY_KEY}"))
        .header("x-api-key", DUMMY_KEY)
        .header("x-goog-api-key", DUMMY_KEY)
        .header("api-key", DUMMY_KEY)
        .header("anthropic-beta", "fine-grained-tool-streaming-2025-05-14")
        .header("anthropic-beta", "interleaved-thinking-2025-05-14")
        .header("openai-beta", "responses=v1")
        .header("user-agent", "opencode/1.0.0 ai-sdk/openai-compatible")
        // A configured header's name: the relay's value (the user's config) wins.
        .header("x-canary", "from-opencode")
        .header("x-not-allowed", "dropped")
        .json(&chat(&ws, "hello", &[], false))
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
    recording.finish(true).unwrap();

    let seen = seen.lock().unwrap();
    let [headers] = seen.as_slice() else {
        panic!("the upstream got {} requests, not one", seen.len());
    };
    let all = |name: &str| -> Vec<&str> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap())
            .collect()
    };
    assert_eq!(
        all("anthropic-beta"),
        [
            "fine-grained-tool-streaming-2025-05-14",
            "interleaved-thinking-2025-05-14"
        ]
    );
    assert_eq!(all("openai-beta"), ["responses=v1"]);
    assert_eq!(
        all("user-agent"),
        ["opencode/1.0.0 ai-sdk/openai-compatible"]
    );
    assert_eq!(
        all("authorization"),
        [format!("Bearer {CANARY_KEY}").as_str()]
    );
    assert_eq!(all("x-canary"), [CANARY_HEADER]);
    for name in ["x-api-key", "x-goog-api-key", "api-key", "x-not-allowed"] {
        assert!(headers.get(name).is_none(), "{name} reached the upstream");
    }
    for (name, value) in headers {
        assert!(
            !value.to_str().unwrap_or_default().contains(DUMMY_KEY),
            "OpenCode's key reached the upstream in {name}"
        );
    }
}

#[test]
fn no_key_hop_by_hop_or_connection_header_is_forwarded() {
    for name in [
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "proxy-authorization",
        "cookie",
        "host",
        "content-length",
        "content-type",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-connection",
    ] {
        assert!(!FORWARDED_HEADERS.contains(&name), "{name} is forwarded");
    }
}
