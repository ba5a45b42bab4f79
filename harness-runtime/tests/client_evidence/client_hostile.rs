//! Hostile and hand-made streams: truncation, garbage, oversized frames, silence, drops; and the
//! whole turn driver against a hand-written server replaying a recording.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::routing::{get, post};
use bytes::Bytes;
use futures::StreamExt;
use harness_runtime::client::{
    AskAnswer, AskPolicy, Client, ClientError, CreateSession, Event, EventStream, PermissionPolicy,
    PermissionReply, Prompt, StreamOptions,
};
use harness_runtime::redact::Redactor;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::{Notify, mpsc};

const CONNECTED: &str =
    "data: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}\n\n";

fn redactor() -> Arc<Redactor> {
    Arc::new(Redactor::for_scenario())
}

async fn parse(text: &str, options: StreamOptions) -> (Vec<Event>, Option<ClientError>) {
    EventStream::from_recording(text, options, redactor())
        .collect_all()
        .await
}

#[tokio::test]
async fn truncated_last_frame_is_a_typed_error() {
    let text = format!("{CONNECTED}data: {{\"type\":\"server.heart");
    let (events, err) = parse(&text, StreamOptions::default()).await;
    assert_eq!(events, [Event::ServerConnected]);
    assert!(
        matches!(err, Some(ClientError::TruncatedFrame { bytes }) if bytes > 10),
        "{err:?}"
    );
}

#[tokio::test]
async fn invalid_json_and_missing_type_are_decode_errors() {
    let (events, err) = parse(
        &format!("{CONNECTED}data: not json\n\n"),
        StreamOptions::default(),
    )
    .await;
    assert_eq!(events.len(), 1);
    match err {
        Some(ClientError::Decode { path, message, .. }) => {
            assert_eq!(path, ".");
            assert!(message.contains("not json"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    let (_, err) = parse("data: {\"properties\":{}}\n\n", StreamOptions::default()).await;
    assert!(
        matches!(err, Some(ClientError::Decode { ref path, .. }) if path == "type"),
        "{err:?}"
    );
}

#[tokio::test]
async fn known_type_with_wrong_shape_names_the_json_path() {
    let frame = "data: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"ses_1\",\"status\":{\"type\":5}}}\n\n";
    let (_, err) = parse(frame, StreamOptions::default()).await;
    match err {
        Some(ClientError::Decode { path, what, .. }) => {
            assert!(path.starts_with("status"), "{path}");
            assert!(what.contains("session.status"), "{what}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn unknown_types_and_fields_are_kept() {
    let text = "data: {\"type\":\"brand.new\",\"properties\":{\"x\":1}}\n\ndata: {\"type\":\"session.idle\",\"properties\":{\"sessionID\":\"ses_1\",\"extra\":true}}\n\n";
    let (events, err) = parse(text, StreamOptions::default()).await;
    assert!(err.is_none());
    assert_eq!(
        events[0],
        Event::Unknown {
            kind: "brand.new".into(),
            properties: json!({"x": 1})
        }
    );
    assert_eq!(events[1].session_id(), Some("ses_1"));
}

#[tokio::test]
async fn oversized_frame_is_rejected_and_smaller_ones_pass() {
    let options = StreamOptions::default().max_frame_bytes(1024);
    let small = format!(
        "data: {{\"type\":\"x\",\"properties\":{{\"p\":\"{}\"}}}}\n\n",
        "a".repeat(900)
    );
    let big = format!(
        "data: {{\"type\":\"x\",\"properties\":{{\"p\":\"{}\"}}}}\n\n",
        "a".repeat(4096)
    );
    let (events, err) = parse(&format!("{CONNECTED}{small}{big}{CONNECTED}"), options).await;
    assert_eq!(events.len(), 2, "connected and the small frame");
    assert!(
        matches!(err, Some(ClientError::FrameTooLarge { limit: 1024 })),
        "{err:?}"
    );
}

/// One byte that is not UTF-8 must not make the stream look silent (an SSE parser that waits for
/// the rest of the character buffers all that follows).
#[tokio::test]
async fn invalid_utf8_is_a_decode_error_at_once_while_the_stream_stays_open() {
    let chunks: Vec<Result<Bytes, ClientError>> = vec![
        Ok(Bytes::from(CONNECTED)),
        Ok(Bytes::from_static(b"data: {\"type\":\"x\xff\"}\n\n")),
        Ok(Bytes::from(CONNECTED)),
    ];
    let open = futures::stream::iter(chunks).chain(futures::stream::pending());
    let options = StreamOptions::default().silence_ceiling(Duration::from_secs(20));
    let mut stream = EventStream::from_bytes(open, options, redactor());
    assert_eq!(
        stream.next_event().await.unwrap(),
        Some(Event::ServerConnected)
    );
    let started = std::time::Instant::now();
    let err = stream.next_event().await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "at once");
    match err {
        ClientError::Decode { path, message, .. } => {
            assert_eq!(path, ".");
            assert!(message.contains("not UTF-8"), "{message}");
        }
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn frames_split_across_chunks_parse_the_same() {
    let text = std::fs::read_to_string(format!(
        "{}/tests/data/streams/r2-ev_q.sse",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let (whole, err) = parse(&text, StreamOptions::default()).await;
    assert!(err.is_none());
    for size in [1usize, 7, 4096] {
        let chunks: Vec<Result<Bytes, ClientError>> = text
            .as_bytes()
            .chunks(size)
            .map(|c| Ok(Bytes::copy_from_slice(c)))
            .collect();
        let stream = EventStream::from_bytes(
            futures::stream::iter(chunks),
            StreamOptions::default(),
            redactor(),
        );
        let (split, err) = stream.collect_all().await;
        assert!(err.is_none(), "chunk size {size}: {err:?}");
        assert_eq!(split, whole, "chunk size {size}");
    }
}

/// A raw HTTP/1.1 server on loopback that answers one request with SSE headers, writes `body`,
/// then either closes (`close`) or holds the socket open until the test ends.
async fn raw_sse_server(body: &'static str, close: bool) -> (String, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let (mut sock, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 4096];
        let mut seen = Vec::new();
        while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = sock.read(&mut buf).await.unwrap();
            if n == 0 {
                return;
            }
            seen.extend_from_slice(&buf[..n]);
        }
        let head =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
        sock.write_all(head.as_bytes()).await.unwrap();
        sock.write_all(body.as_bytes()).await.unwrap();
        sock.flush().await.unwrap();
        if !close {
            // Hold the connection open without writing: the client's watchdog must fire.
            let _ = sock.read(&mut buf).await;
        }
    });
    (format!("http://{addr}"), task)
}

#[tokio::test]
async fn silent_stream_trips_the_watchdog() {
    let (base, server) = raw_sse_server(CONNECTED, false).await;
    let client = Client::new(base, redactor());
    let options = StreamOptions::default().silence_ceiling(Duration::from_millis(300));
    let mut stream = client.subscribe_with(options).await.expect("connected");
    let started = std::time::Instant::now();
    let err = stream.next_event().await.unwrap_err();
    assert!(
        matches!(err, ClientError::StreamSilent { after, .. } if after == Duration::from_millis(300)),
        "{err}"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(err.to_string().contains("silent"));
    drop(stream);
    server.await.unwrap();
}

#[tokio::test]
async fn dropped_stream_ends_cleanly_between_frames() {
    let (base, server) = raw_sse_server(CONNECTED, true).await;
    let client = Client::new(base, redactor());
    let mut stream = client.subscribe().await.expect("connected");
    assert!(stream.next_event().await.unwrap().is_none());
    server.await.unwrap();
}

#[tokio::test]
async fn connection_refused_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::new(format!("http://{addr}"), redactor());
    let err = client.health().await.unwrap_err();
    assert!(matches!(err, ClientError::Transport { .. }), "{err}");
}

/// A hand-written OpenCode stand-in: `/event` says connected, waits for the prompt, then replays
/// `frames`; the other routes answer what the driver needs and record what was posted.
struct FakeServer {
    base: String,
    posted: Arc<Mutex<Vec<(String, Value)>>>,
    /// Sessions whose message list was asked for (`GET /session/{id}/message`).
    listed: Arc<Mutex<Vec<String>>>,
    _task: tokio::task::JoinHandle<()>,
}

async fn fake_server(frames: Vec<String>) -> FakeServer {
    fake_server_of(String::new(), frames).await
}

/// [`fake_server`] whose `POST /session` creates `created` (the recording's session).
async fn fake_server_of(created: String, frames: Vec<String>) -> FakeServer {
    let prompted = Arc::new(Notify::new());
    let listed: Arc<Mutex<Vec<String>>> = Arc::default();
    let listed_by_route = listed.clone();
    let posted: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
    let frames = Arc::new(frames);
    let (p1, p2) = (prompted.clone(), prompted.clone());
    let (rec1, rec2) = (posted.clone(), posted.clone());
    let app = Router::new()
        .route(
            "/event",
            get(move || {
                let (prompted, frames) = (p1.clone(), frames.clone());
                async move {
                    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(16);
                    tokio::spawn(async move {
                        let _ = tx.send(Ok(Bytes::from(CONNECTED))).await;
                        prompted.notified().await;
                        for f in frames.iter() {
                            if tx.send(Ok(Bytes::from(f.clone()))).await.is_err() {
                                return;
                            }
                        }
                        // Keep the stream open: the turn must end on its own events.
                        tx.closed().await;
                    });
                    Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(rx))
                }
            }),
        )
        .route(
            "/session/{id}",
            get(|Path(id): Path<String>| async move {
                axum::Json(json!({"id": id, "title": "t", "directory": "/w"}))
            }),
        )
        .route(
            "/session",
            post(move || {
                let id = created.clone();
                async move { axum::Json(json!({"id": id, "title": "t", "directory": "/w"})) }
            }),
        )
        .route(
            "/session/{id}/message",
            get(move |Path(id): Path<String>| {
                let listed = listed_by_route.clone();
                async move {
                    listed.lock().unwrap().push(id);
                    axum::Json(json!([]))
                }
            }),
        )
        .route(
            "/session/{id}/prompt_async",
            post(move |Path(id): Path<String>, axum::Json(body): axum::Json<Value>| {
                let (prompted, rec) = (p2.clone(), rec1.clone());
                async move {
                    rec.lock().unwrap().push((format!("prompt {id}"), body));
                    prompted.notify_one();
                    axum::http::StatusCode::NO_CONTENT
                }
            }),
        )
        .route(
            "/permission/{id}/reply",
            post(move |Path(id): Path<String>, axum::Json(body): axum::Json<Value>| {
                let rec = rec2.clone();
                async move {
                    rec.lock().unwrap().push((format!("reply {id}"), body));
                    axum::Json(json!(true))
                }
            }),
        )
        .route("/permission", get(|| async { axum::Json(json!([{"id":"per_x","sessionID":"ses_x","permission":"bash","patterns":["rm"],"metadata":{},"always":[]}])) }))
        .route("/question", get(|| async { axum::Json(json!([])) }))
        .route("/session/status", get(|| async { axum::Json(json!({"ses_x":{"type":"busy"}})) }));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    FakeServer {
        base,
        posted,
        listed,
        _task: task,
    }
}

fn session_frames(recording: &str, session_prefix: &str) -> (String, Vec<String>) {
    let text = std::fs::read_to_string(format!(
        "{}/tests/data/streams/{recording}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut sid = String::new();
    let frames = text
        .split("\n\n")
        .filter(|f| f.contains(&format!("\"sessionID\":\"{session_prefix}")))
        .inspect(|f| {
            if sid.is_empty() {
                let v: Value = serde_json::from_str(f.trim_start_matches("data: ")).unwrap();
                sid = v["properties"]["sessionID"].as_str().unwrap().to_string();
            }
        })
        .map(|f| format!("{f}\n\n"))
        .collect();
    (sid, frames)
}

#[tokio::test]
async fn prompt_with_answers_the_permission_and_collects_the_turn() {
    let (sid, frames) = session_frames("r2-ev_perm.sse", "ses_dd704bf7");
    let server = fake_server(frames).await;
    let client = Client::new(server.base.clone(), redactor());
    let session = client.session(&sid).await.unwrap();
    let prompt = Prompt::new("RUN_BASH")
        .asks(AskPolicy::leave_pending().permissions(PermissionPolicy::Once))
        .with_ceiling(Duration::from_secs(20));
    let turn = session.prompt_with(prompt).await.expect("turn");
    assert_eq!(turn.text, "Tool finished: hi-from-bash\n");
    assert_eq!(
        turn.interactions[0].answer,
        Some(AskAnswer::Permission(PermissionReply::Once))
    );
    let posted = server.posted.lock().unwrap().clone();
    assert_eq!(posted.len(), 2, "{posted:?}");
    assert_eq!(posted[0].1["parts"][0]["text"], "RUN_BASH");
    assert_eq!(posted[1].0, "reply per_228fb5096001kLUpDdWiqdRQ0b");
    assert_eq!(posted[1].1, json!({"reply": "once"}));
}

#[tokio::test]
async fn a_session_this_client_created_needs_no_baseline_request_until_it_changes() {
    let (sid, frames) = session_frames("r2-ev_perm.sse", "ses_dd704bf7");
    let server = fake_server_of(sid.clone(), frames).await;
    let client = Client::new(server.base.clone(), redactor());
    let policy = AskPolicy::leave_pending().permissions(PermissionPolicy::Once);
    let prompt = |text: &str| {
        Prompt::new(text)
            .asks(policy.clone())
            .with_ceiling(Duration::from_secs(20))
    };
    // Created here and untouched: its message list is known to be empty.
    let created = client
        .create_session(&CreateSession::titled("fresh"))
        .await
        .unwrap();
    let turn = created.prompt_with(prompt("RUN_BASH")).await.expect("turn");
    assert_eq!(turn.text, "Tool finished: hi-from-bash\n");
    assert!(server.listed.lock().unwrap().is_empty());
    // Once prompted, or when only fetched by id, the list is asked for again.
    let again = client.session(&sid).await.unwrap();
    let _ = again
        .prompt_with(prompt("again").with_ceiling(Duration::from_millis(300)))
        .await;
    assert_eq!(
        server.listed.lock().unwrap().as_slice(),
        std::slice::from_ref(&sid)
    );
    let other = Client::new(server.base.clone(), redactor());
    let fetched = other.session(&sid).await.unwrap();
    let _ = fetched
        .prompt_with(prompt("fetched").with_ceiling(Duration::from_millis(300)))
        .await;
    assert_eq!(*server.listed.lock().unwrap(), [sid.clone(), sid]);
}

/// A server whose turn stops right after the permission was asked, and a session on it.
async fn turn_cut_after_the_ask() -> (FakeServer, harness_runtime::client::Session) {
    let (sid, mut frames) = session_frames("r2-ev_perm.sse", "ses_dd704bf7");
    let cut = frames
        .iter()
        .position(|f| f.contains("permission.asked"))
        .unwrap();
    frames.truncate(cut + 1);
    let server = fake_server(frames).await;
    let client = Client::new(server.base.clone(), redactor());
    let session = client.session(&sid).await.unwrap();
    (server, session)
}

#[tokio::test]
async fn turn_timeout_names_what_was_pending() {
    let (server, session) = turn_cut_after_the_ask().await;
    let prompt = Prompt::new("RUN_BASH").with_ceiling(Duration::from_millis(1500));
    let err = session.prompt_with(prompt).await.unwrap_err();
    match &err {
        ClientError::TurnTimeout { pending, .. } => {
            // Named, and redacted: the real id never reaches the message.
            assert!(pending.contains("permission [permission-1]"), "{pending}");
            assert!(!pending.contains("per_228fb5096001"), "{pending}");
            assert!(pending.contains("unanswered"), "{pending}");
            assert!(pending.contains("GET /permission [{"), "{pending}");
            assert!(
                pending.contains("GET /session/status {\"ses_x\""),
                "{pending}"
            );
        }
        other => panic!("{other}"),
    }
    assert_eq!(
        server.posted.lock().unwrap().len(),
        1,
        "nothing answered by default"
    );
}

#[tokio::test]
async fn an_ask_left_unanswered_past_the_ask_ceiling_fails_the_turn_naming_it() {
    let (server, session) = turn_cut_after_the_ask().await;
    let prompt = Prompt::new("RUN_BASH")
        .with_ceiling(Duration::from_secs(60))
        .with_ask_ceiling(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let err = session.prompt_with(prompt).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}: the turn's ceiling, not the ask's",
        started.elapsed()
    );
    match &err {
        ClientError::AskUnanswered { after, pending } => {
            assert_eq!(*after, Duration::from_millis(300));
            assert!(pending.contains("permission [permission-1]"), "{pending}");
            assert!(pending.contains("unanswered"), "{pending}");
        }
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("ask ceiling"), "{err}");
    assert_eq!(server.posted.lock().unwrap().len(), 1, "nothing answered");
}
