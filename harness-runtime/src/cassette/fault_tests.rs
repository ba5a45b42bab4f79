//! Cassettes when things go wrong: a changed prompt, a broken file, credentials, a client
//! that leaves, an upstream that cannot be reached, a failed scenario.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::command::display_path;
use super::format::{Cassette, RecordedResponse, StreamEnd};
use super::test_support::*;
use crate::model::{Answer, ModelPlan, ModelSlot, Reply};

/// Records one streamed text answer to "Say hello" into `path`.
async fn record_hello(path: &std::path::Path, passed: bool) -> Side {
    let (_upstream_slot, upstream) = upstream();
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (mut recording, relay_config) = Side::recording(path, &config);
    upstream.reply(Reply::text("Hello!").in_deltas(2));
    let body = chat(&recording.workspace(), "Say hello", &["bash"], true);
    let received = send(&chat_url(&relay_config, "real"), &body).await.unwrap();
    assert_eq!(received.status, 200);
    let finished = recording.finish(passed);
    assert!(finished.is_ok(), "{finished:?}");
    recording
}

#[tokio::test]
async fn a_changed_prompt_is_a_miss_naming_the_field_and_the_command_that_records_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    record_hello(&path, true).await;
    let (mut replaying, config) = Side::replaying(&path);
    let body = chat(&replaying.workspace(), "Say goodbye", &["bash"], true);
    let received = send(&chat_url(&config, "cassette"), &body).await.unwrap();
    assert_eq!(received.status, 400, "a miss ends the turn at once");
    let requests = replaying.slot.model().unwrap().requests();
    assert_eq!(requests[0].answer, Answer::Miss);
    let error = replaying.finish(true).unwrap_err().to_string();
    for expected in [
        &format!(
            "cassette {}: 1 request(s) matched no recorded interaction",
            display_path(&path)
        ),
        "first difference: last_user_text",
        "recorded: \"Say hello\"",
        "got:      \"Say goodbye\"",
        "LIVE_CASSETTE=record cargo test --test harness_runtime -- t::cassette --exact",
    ] {
        assert!(error.contains(expected), "{expected:?} in:\n{error}");
    }
}

#[tokio::test]
async fn a_miss_answers_in_the_shape_of_the_api_asked() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let (_upstream_slot, upstream) = upstream();
    let base = format!("{}/api", upstream.ollama_url());
    let (mut recording, relay_config) =
        Side::recording(&path, &user_config(&base, "ollama-ai-provider-v2"));
    upstream.reply(Reply::text("Hi"));
    let body = chat(&recording.workspace(), "Say hello", &["bash"], false);
    let relayed = send(&chat_url(&relay_config, "real"), &body).await.unwrap();
    assert_eq!(relayed.status, 200);
    recording.finish(true).unwrap();

    let (replaying, config) = Side::replaying(&path);
    let body = chat(&replaying.workspace(), "Say goodbye", &["bash"], false);
    let url = chat_url(&config, "cassette");
    assert!(url.ends_with("/api/chat"), "{url}");
    let received = send(&url, &body).await.unwrap();
    assert_eq!(received.status, 400);
    // Ollama's shape, `{"error":"…"}`: an Ollama client reads nothing from OpenAI's.
    let error: serde_json::Value = serde_json::from_slice(&received.body).unwrap();
    assert!(
        error["error"]
            .as_str()
            .is_some_and(|m| m.contains("no recorded interaction matches")),
        "{error}"
    );
    let openai_url = url.replace("/api/chat", "/v1/chat/completions");
    let received = send(&openai_url, &body).await.unwrap();
    assert_eq!(received.status, 400);
    let error: serde_json::Value = serde_json::from_slice(&received.body).unwrap();
    assert_eq!(error["error"]["type"], "cassette_miss", "{error}");
}

#[tokio::test]
async fn broken_cassettes_are_errors_naming_the_file_and_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    record_hello(&path, true).await;
    let good = std::fs::read_to_string(&path).unwrap();
    let shown = display_path(&path);

    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let error = Side::replay_error(&path);
    assert!(
        error.contains(&shown) && error.contains("not JSON"),
        "{error}"
    );

    std::fs::write(&path, good.replacen("\"format\": 1", "\"format\": 7", 1)).unwrap();
    let error = Side::replay_error(&path);
    assert!(
        error.contains(&shown) && error.contains("format 7, but this harness reads format 1"),
        "{error}"
    );

    std::fs::write(
        &path,
        good.replacen("\"stream\": true", "\"stream\": \"yes\"", 1),
    )
    .unwrap();
    let error = Side::replay_error(&path);
    assert!(
        error.contains(&shown) && error.contains("at `interactions[0].request.stream`"),
        "{error}"
    );
    assert!(error.contains("line "), "the line and column: {error}");

    std::fs::remove_file(&path).unwrap();
    let error = Side::replay_error(&path);
    assert!(
        error.contains(&shown) && error.contains("could not read it"),
        "{error}"
    );
}

/// A one-shot HTTP upstream that answers `body` and returns the request head it got.
async fn capturing_upstream(body: String) -> (String, tokio::task::JoinHandle<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut received = Vec::new();
        let mut buffer = [0u8; 8192];
        let head_end = loop {
            let n = stream.read(&mut buffer).await.unwrap();
            assert!(n > 0, "the request ended early");
            received.extend_from_slice(&buffer[..n]);
            if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
                break at;
            }
        };
        let head = String::from_utf8_lossy(&received[..head_end]).to_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap());
        while received.len() < head_end + 4 + length {
            let n = stream.read(&mut buffer).await.unwrap();
            received.extend_from_slice(&buffer[..n]);
        }
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
             connection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(response.as_bytes()).await.unwrap();
        stream.shutdown().await.unwrap();
        head
    });
    (base, task)
}

#[tokio::test]
async fn credentials_reach_the_upstream_and_no_cassette_config_or_message() {
    // The model echoes the header value: what it says is stored redacted.
    let answer = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": format!("echo {CANARY_HEADER}")}}]});
    let (base, upstream) = capturing_upstream(answer.to_string()).await;
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let (mut recording, relay_config) =
        Side::recording(&path, &user_config(&base, "@ai-sdk/openai-compatible"));
    assert_no_canary(&relay_config.to_string());
    assert!(
        !relay_config.to_string().contains(&base),
        "the upstream's address is a secret too"
    );
    let body = chat(
        &recording.workspace(),
        &format!("my key is {CANARY_KEY}"),
        &[],
        false,
    );
    let received = send(&chat_url(&relay_config, "real"), &body).await.unwrap();
    assert!(String::from_utf8_lossy(&received.body).contains(CANARY_HEADER));
    let head = upstream.await.unwrap();
    assert!(head.starts_with("post /v1/chat/completions "), "{head}");
    assert!(
        head.contains(&format!("authorization: bearer {CANARY_KEY}")),
        "{head}"
    );
    assert!(
        head.contains(&format!("x-canary: {CANARY_HEADER}")),
        "{head}"
    );
    recording.finish(true).unwrap();
    let text = cassette_text(&path);
    assert!(!text.contains(&base), "{text}");
    assert!(
        text.contains("my key is [secret]") && text.contains("echo [secret]"),
        "{text}"
    );
    for line in recording.progress.borrow().iter() {
        assert_no_canary(line);
    }
    // A miss against it names the request without the secret.
    let (mut replaying, config) = Side::replaying(&path);
    let body = chat(
        &replaying.workspace(),
        &format!("{CANARY_KEY} again"),
        &[],
        false,
    );
    send(&chat_url(&config, "cassette"), &body).await.unwrap();
    replaying.redactor.add_secret(CANARY_KEY);
    let error = replaying.finish(true).unwrap_err().to_string();
    assert!(error.contains("[secret]"), "{error}");
    assert_no_canary(&error);
}

#[tokio::test]
async fn a_client_that_goes_away_mid_stream_is_recorded_and_replayed_as_client_closed() {
    let (_upstream_slot, upstream) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (mut recording, relay_config) = Side::recording(&path, &config);
    let (reply, stall) = Reply::text("one two three").in_deltas(3).stalled();
    upstream.reply(reply);
    let body = chat(
        &recording.workspace(),
        "Tell me a long story",
        &["bash"],
        true,
    );
    let mut reading = Reading::start(&chat_url(&relay_config, "real"), &body).await;
    reading
        .until("the role chunk", |bytes| bytes.ends_with(b"\n\n"))
        .await;
    stall.reached().await.expect("the upstream holds its reply");
    let first = std::mem::take(&mut reading.bytes);
    // The client goes away while the upstream holds its stream. The relay must let go of the
    // upstream's stream with it, which is what abandons the stall: then nothing more can reach
    // the tape.
    drop(reading);
    assert!(
        stall.abandoned_within(ceiling()).await,
        "the relay kept reading the upstream's stream after its client went away"
    );
    recording.finish(true).unwrap();
    let cassette: Cassette = serde_json::from_str(&cassette_text(&path)).unwrap();
    let RecordedResponse::Stream { chunks, end, .. } = &cassette.interactions[0].response else {
        panic!("a stream: {:?}", cassette.interactions[0].response);
    };
    assert_eq!(*end, StreamEnd::ClientClosed);
    assert_eq!(chunks.len(), 1, "only what was relayed: {chunks:?}");

    let (replaying, config) = Side::replaying(&path);
    let body = chat(
        &replaying.workspace(),
        "Tell me a long story",
        &["bash"],
        true,
    );
    let mut reading = Reading::start(&chat_url(&config, "cassette"), &body).await;
    reading
        .until("the recorded chunk", |bytes| bytes.len() >= first.len())
        .await;
    assert_eq!(reading.bytes, first, "the same chunk");
    assert!(
        reading.stays_open(Duration::from_millis(300)).await,
        "then the stream is held open, as it was when the client left"
    );
}

#[tokio::test]
async fn an_unreachable_upstream_is_recorded_and_replayed_as_a_reset_connection() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", closed.local_addr().unwrap());
    drop(closed);
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let (mut recording, relay_config) =
        Side::recording(&path, &user_config(&base, "@ai-sdk/openai-compatible"));
    let body = chat(&recording.workspace(), "anyone there?", &[], true);
    assert!(send(&chat_url(&relay_config, "real"), &body).await.is_err());
    recording.finish(true).unwrap();
    let text = cassette_text(&path);
    let cassette: Cassette = serde_json::from_str(&text).unwrap();
    let RecordedResponse::Dropped { detail } = &cassette.interactions[0].response else {
        panic!("dropped: {text}");
    };
    assert!(detail.starts_with("could not connect"), "{detail}");
    assert!(!text.contains(&base), "{text}");

    let (replaying, config) = Side::replaying(&path);
    let body = chat(&replaying.workspace(), "anyone there?", &[], true);
    assert!(send(&chat_url(&config, "cassette"), &body).await.is_err());
}

#[tokio::test]
async fn a_failed_scenario_writes_its_cassette_as_pending_until_a_passing_recording() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let pending = dir.path().join("cassettes/t__cassette.json.pending");
    let failed = record_hello(&path, false).await;
    assert!(pending.exists() && !path.exists());
    assert_eq!(
        *failed.progress.borrow(),
        [format!(
            "cassette written as pending: {} (the scenario failed; fix it and record again)",
            display_path(&pending)
        )]
    );
    record_hello(&path, true).await;
    assert!(
        path.exists() && !pending.exists(),
        "a passing recording replaces the pending one"
    );
}

#[tokio::test]
async fn a_recorded_scenario_that_started_no_agent_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let mut slot = ModelSlot::default();
    slot.set_plan(ModelPlan::Record { path: path.clone() }, SCENARIO);
    let lines = std::cell::RefCell::new(Vec::new());
    let redactor = crate::redact::Redactor::default();
    let end = super::scenario::RunEnd {
        verdict: super::format::Verdict::Passed,
        opencode: None,
    };
    super::scenario::finish_scenario(&mut slot, &redactor, end, &|l| {
        lines.borrow_mut().push(l.to_owned())
    })
    .unwrap();
    assert!(!path.exists());
    assert!(
        lines.borrow()[0].starts_with("no cassette written"),
        "{:?}",
        lines.borrow()
    );
}
