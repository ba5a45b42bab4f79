//! The forwarder in front of the fixture agent: requests, responses and event streams pass
//! unchanged; wire gates hold the product, never the agent; faults answer, delay and drop; a
//! gone agent answers 502; the product's requests are logged by route, redacted.

mod fixture_common;

use std::time::{Duration, Instant};

use bytes::Bytes;
use fixture_common::*;
use futures::StreamExt;
use harness_runtime::gates::WirePoint;
use harness_runtime::testing::Forwarder;
use serde_json::{Value, json};

/// A fixture agent and a forwarder in front of it.
struct Setup {
    home: tempfile::TempDir,
    agent: Agent,
    forwarder: Forwarder,
}

fn setup() -> Setup {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let forwarder = Forwarder::start(&agent.base).expect("start the forwarder");
    Setup {
        home,
        agent,
        forwarder,
    }
}

impl Setup {
    /// The requests the agent served, as its request log has them (`METHOD path status`).
    fn served(&self) -> Vec<String> {
        std::fs::read_to_string(self.home.path().join("requests.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

/// What a raw subscription delivered.
#[derive(Debug)]
enum Item {
    /// One frame, its bytes as they came.
    Frame(Bytes),
    /// The body ended: `true` when it broke rather than ended cleanly.
    End(bool),
}

/// An event stream read as bytes, cut into frames by hand: what a product's stream receives.
struct Raw {
    rx: tokio::sync::mpsc::UnboundedReceiver<Item>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Raw {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn kind(frame: &[u8]) -> String {
    let text = std::str::from_utf8(frame).expect("a frame is UTF-8");
    let data = text
        .strip_prefix("data: ")
        .unwrap_or_else(|| panic!("not a data frame: {text:?}"));
    let event: Value = serde_json::from_str(data.trim_end()).expect("a frame's data is JSON");
    event["type"].as_str().unwrap_or_default().to_owned()
}

fn session_of(frame: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(frame).ok()?;
    let event: Value = serde_json::from_str(text.strip_prefix("data: ")?.trim_end()).ok()?;
    event["properties"]["sessionID"].as_str().map(str::to_owned)
}

impl Raw {
    /// Subscribes to `<base>/event` and returns once `server.connected` arrived.
    async fn subscribe(base: &str) -> Raw {
        let response = reqwest::Client::new()
            .get(format!("{base}/event"))
            .send()
            .await
            .expect("subscribe");
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut body = response.bytes_stream();
            let mut buffer = Vec::new();
            let broke = loop {
                match body.next().await {
                    Some(Ok(chunk)) => {
                        buffer.extend_from_slice(&chunk);
                        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
                            let frame: Vec<u8> = buffer.drain(..end + 2).collect();
                            let _ = tx.send(Item::Frame(frame.into()));
                        }
                    }
                    Some(Err(_)) => break true,
                    None => break false,
                }
            };
            let _ = tx.send(Item::End(broke));
        });
        let mut raw = Raw { rx, task };
        let (frames, end) = raw.until(|f| kind(f) == "server.connected").await;
        assert!(end.is_none(), "the stream ended before server.connected");
        assert_eq!(frames.len(), 1, "server.connected comes first");
        raw
    }

    /// Frames (heartbeats aside) up to the first that `stop` matches, or to the stream's end
    /// (then `Some(broke)`), within 20 s.
    async fn until(&mut self, stop: impl Fn(&[u8]) -> bool) -> (Vec<Bytes>, Option<bool>) {
        let within = ceiling(20.0);
        let mut frames = Vec::new();
        loop {
            let item = tokio::time::timeout(within, self.rx.recv())
                .await
                .unwrap_or_else(|_| {
                    let kinds: Vec<String> = frames.iter().map(|f: &Bytes| kind(f)).collect();
                    panic!("no matching frame within {within:?}; saw {kinds:?}")
                });
            match item {
                Some(Item::Frame(frame)) if kind(&frame) == "server.heartbeat" => {}
                Some(Item::Frame(frame)) => {
                    let done = stop(&frame);
                    frames.push(frame);
                    if done {
                        return (frames, None);
                    }
                }
                Some(Item::End(broke)) => return (frames, Some(broke)),
                None => return (frames, Some(true)),
            }
        }
    }

    /// The frames that arrived so far, without waiting (heartbeats aside).
    fn arrived(&mut self) -> Vec<Bytes> {
        let mut frames = Vec::new();
        while let Ok(item) = self.rx.try_recv() {
            if let Item::Frame(frame) = item {
                if kind(&frame) != "server.heartbeat" {
                    frames.push(frame);
                }
            }
        }
        frames
    }
}

fn idle_of(session: &str) -> impl Fn(&[u8]) -> bool + '_ {
    move |frame| kind(frame) == "session.idle" && session_of(frame).as_deref() == Some(session)
}

fn point(spelling: &str) -> WirePoint {
    WirePoint::parse(spelling).unwrap_or_else(|e| panic!("{e}"))
}

async fn prompt_via(base: &str, session: &str) {
    let (status, body) = post(
        &format!("{base}/session/{session}/prompt_async"),
        text_prompt("hello"),
    )
    .await;
    assert_eq!(status, 204, "{body}");
}

/// What a response is, for comparing the direct and the forwarded one: status, the headers a
/// client reads, body.
async fn answer(request: reqwest::RequestBuilder) -> (u16, Vec<(String, String)>, Bytes) {
    let response = request.send().await.expect("a response");
    let status = response.status().as_u16();
    let mut headers: Vec<(String, String)> = response
        .headers()
        .iter()
        .filter(|(name, _)| *name != "date")
        .map(|(name, value)| (name.to_string(), value.to_str().unwrap_or("?").to_owned()))
        .collect();
    headers.sort();
    (status, headers, response.bytes().await.expect("a body"))
}

/// A request: method, path and query, one header.
type Case<'a> = (reqwest::Method, String, Option<(&'a str, &'a str)>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_and_responses_pass_unchanged() {
    let s = setup();
    let session = new_session(&s.agent).await;
    let client = http();
    let direct = &s.agent.base;
    let forwarded = &s.forwarder.url();
    let workspace = tempfile::tempdir().unwrap();
    let directory = workspace.path().to_str().unwrap();
    let cases: Vec<Case> = vec![
        (reqwest::Method::GET, "/global/health".into(), None),
        (reqwest::Method::GET, "/session".into(), None),
        (reqwest::Method::GET, "/session?limit=1".into(), None),
        (reqwest::Method::GET, format!("/session/{session}"), None),
        (
            reqwest::Method::GET,
            format!("/session/{session}/message"),
            None,
        ),
        (
            reqwest::Method::GET,
            "/session/ses_doesnotexist000000000000".into(),
            None,
        ),
        (reqwest::Method::GET, "/session/status".into(), None),
        (reqwest::Method::GET, "/no/such/route".into(), None),
        (reqwest::Method::PATCH, "/session".into(), None),
        (reqwest::Method::HEAD, "/global/health".into(), None),
        (
            reqwest::Method::GET,
            "/session".into(),
            Some(("x-opencode-directory", directory)),
        ),
    ];
    for (method, path, header) in cases {
        let request = |base: &str| {
            let mut request = client.request(method.clone(), format!("{base}{path}"));
            if let Some((name, value)) = header {
                request = request.header(name, value);
            }
            request
        };
        let by_agent = answer(request(direct)).await;
        let by_forwarder = answer(request(forwarded)).await;
        assert_eq!(by_forwarder, by_agent, "{method} {path}");
    }

    // Bodies reach the agent as sent, with a length or chunked.
    let (status, created) = post(&format!("{forwarded}/session"), json!({"title": "sized"})).await;
    assert_eq!((status, created["title"].as_str()), (200, Some("sized")));
    let chunks = ["{\"title\":", "\"chunked\"}"].map(|c| Ok::<_, std::io::Error>(Bytes::from(c)));
    let response = client
        .post(format!("{forwarded}/session"))
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(chunks)))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["title"], "chunked");

    // The directory header reaches the agent: the session is the directory's.
    let response = client
        .post(format!("{forwarded}/session"))
        .header("x-opencode-directory", directory)
        .json(&json!({"title": "elsewhere"}))
        .send()
        .await
        .unwrap();
    let created: Value = response.json().await.unwrap();
    assert_eq!(created["directory"], directory);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_products_requests_are_logged_by_route_with_bodies_on_request_and_redacted() {
    let s = setup();
    let forwarded = s.forwarder.url();
    get(&format!("{forwarded}/global/health")).await;
    let (_, created) = post(&format!("{forwarded}/session"), json!({"title": "t"})).await;
    let session = created["id"].as_str().unwrap().to_owned();
    get(&format!("{forwarded}/session/{session}")).await;
    get(&format!("{forwarded}/session/status")).await;
    // A route OpenCode does not have: it answers its web app's page (200, HTML), as the real
    // server does; the log keeps the path as sent, its id redacted.
    let page = http()
        .get(format!("{forwarded}/no/such/{session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.text().await.unwrap().starts_with("<!doctype html>"));
    s.forwarder.redactor().add_secret("hunter2-secret");
    s.forwarder.wire().record_bodies(true);
    post(
        &format!("{forwarded}/session"),
        json!({"title": "hunter2-secret"}),
    )
    .await;

    let logged: Vec<Value> = s
        .forwarder
        .wire()
        .requests()
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    let log = serde_json::to_string(&logged).unwrap();
    assert!(!log.contains("hunter2") && !log.contains(&session), "{log}");
    let lines: Vec<String> = logged
        .iter()
        .map(|r| format!("{} {} {}", r["method"], r["route"], r["status"]))
        .collect();
    assert_eq!(
        lines,
        [
            r#""GET" "/global/health" 200"#,
            r#""POST" "/session" 200"#,
            r#""GET" "/session/{sessionID}" 200"#,
            r#""GET" "/session/status" 200"#,
            r#""GET" "/no/such/[session-1]" 200"#,
            r#""POST" "/session" 200"#,
        ]
    );
    assert!(logged[..5].iter().all(|r| r.get("request_body").is_none()));
    assert_eq!(logged[5]["request_body"], json!({"title": "[secret]"}));
    assert_eq!(logged[5]["response_body"]["title"], "[secret]");
    assert!(
        logged[5]["response_body"]["id"]
            .as_str()
            .unwrap()
            .starts_with("[session-")
    );
    let counters = serde_json::to_value(s.forwarder.wire().counters()).unwrap();
    assert_eq!(
        counters["requests"],
        json!({
            "GET /global/health": 1,
            "GET /no/such/[session-1]": 1,
            "GET /session/status": 1,
            "GET /session/{sessionID}": 1,
            "POST /session": 2,
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_stream_arrives_byte_for_byte_and_an_event_gate_holds_it_in_order() {
    let s = setup();
    let forwarded = s.forwarder.url();
    let mut direct = Raw::subscribe(&s.agent.base).await;
    let mut held = Raw::subscribe(&forwarded).await;
    let first = new_session(&s.agent).await;
    let second = new_session(&s.agent).await;
    let gate = s.forwarder.gates().arm(point("event session.idle"));

    prompt_via(&forwarded, &first).await;
    let (mut by_agent, _) = direct.until(idle_of(&first)).await;
    gate.wait_until_entered_within(Duration::from_secs(10))
        .await
        .unwrap();
    // Meanwhile another turn: the held stream holds its events too, behind the held one; a
    // stream opened now, and the agent, go on.
    let mut other = Raw::subscribe(&forwarded).await;
    prompt_via(&s.agent.base, &second).await;
    let (later, _) = direct.until(idle_of(&second)).await;
    let (by_other, end) = other.until(idle_of(&second)).await;
    assert!(end.is_none());
    // It opened after the first turn's end: what the agent sent since, byte for byte.
    assert!(
        later.ends_with(&by_other) && by_other.len() > 3,
        "the other stream: {:?}\nthe agent's: {:?}",
        by_other.iter().map(|f| kind(f)).collect::<Vec<_>>(),
        later.iter().map(|f| kind(f)).collect::<Vec<_>>()
    );
    by_agent.extend(later);
    let before_release = held.arrived();
    assert!(
        !before_release.iter().any(|f| kind(f) == "session.idle"),
        "the held stream delivered session.idle before its release"
    );
    gate.release();
    let (rest, end) = held.until(idle_of(&second)).await;
    assert!(end.is_none());
    let by_held: Vec<Bytes> = before_release.into_iter().chain(rest).collect();
    assert_eq!(
        by_held, by_agent,
        "the held stream, in order, byte for byte"
    );
    let counters = s.forwarder.wire().counters();
    assert_eq!(counters.events["session.idle"], 3, "{counters:?}");
    assert_eq!(counters.events["server.connected"], 2, "{counters:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_and_response_gates_hold_the_product_not_the_agent() {
    let s = setup();
    let forwarded = s.forwarder.url();
    let session = new_session(&s.agent).await;
    let gate = s
        .forwarder
        .gates()
        .arm(point("request POST /session/{id}/abort"));
    let abort = tokio::spawn({
        let url = format!("{forwarded}/session/{session}/abort");
        async move { post(&url, json!({})).await }
    });
    gate.wait_until_entered_within(Duration::from_secs(10))
        .await
        .unwrap();
    assert!(
        !s.served().iter().any(|line| line.contains("/abort")),
        "the agent got the abort before the gate's release: {:?}",
        s.served()
    );
    gate.release();
    let (status, body) = abort.await.unwrap();
    assert_eq!((status, body), (200, json!(true)));
    assert!(s.served().iter().any(|line| line.contains("/abort")));

    let gate = s
        .forwarder
        .gates()
        .arm(point("response GET /session/{sessionID}"));
    let fetch = tokio::spawn({
        let url = format!("{forwarded}/session/{session}");
        async move { get(&url).await }
    });
    gate.wait_until_entered_within(Duration::from_secs(10))
        .await
        .unwrap();
    // The agent answered; the product has not got the answer.
    assert!(
        s.served()
            .iter()
            .any(|line| line == "GET /session/{ses} 200"),
        "{:?}",
        s.served()
    );
    assert!(!fetch.is_finished());
    gate.release();
    let (status, body) = fetch.await.unwrap();
    assert_eq!((status, body["id"].as_str()), (200, Some(session.as_str())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_fails_once_then_passes_and_a_delay_holds_it() {
    let s = setup();
    let forwarded = s.forwarder.url();
    let wire = s.forwarder.wire();
    wire.record_bodies(true);
    wire.fail_once("POST /session", 503, r#"{"error":"overloaded"}"#)
        .unwrap();
    let (status, body) = post(&format!("{forwarded}/session"), json!({"title": "t"})).await;
    assert_eq!((status, body), (503, json!({"error": "overloaded"})));
    assert!(
        !s.served()
            .iter()
            .any(|line| line.starts_with("POST /session")),
        "a failed request must not reach the agent"
    );
    let (status, _) = post(&format!("{forwarded}/session"), json!({"title": "t"})).await;
    assert_eq!(status, 200, "once only");
    wire.fail_once("GET /session/{id}", 500, "plain words")
        .unwrap();
    let response = http()
        .get(format!("{forwarded}/session/ses_x"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(response.text().await.unwrap(), "plain words");

    let delay = Duration::from_millis(400);
    wire.delay("GET /session/status", delay).unwrap();
    let started = Instant::now();
    assert_eq!(get(&format!("{forwarded}/session/status")).await.0, 200);
    assert!(started.elapsed() >= delay, "{:?}", started.elapsed());
    wire.delay("GET /session/status", Duration::ZERO).unwrap();

    let logged = wire.requests();
    assert_eq!(
        logged[0].response_body,
        Some(json!({"error": "overloaded"}))
    );
    assert_eq!(
        logged[2].response_body,
        Some(json!("plain words")),
        "a body that is not JSON is text"
    );
    let requests: Vec<(String, Option<u16>)> =
        logged.into_iter().map(|r| (r.route, r.status)).collect();
    assert_eq!(
        requests,
        [
            ("/session".to_owned(), Some(503)),
            ("/session".to_owned(), Some(200)),
            ("/session/{sessionID}".to_owned(), Some(500)),
            ("/session/status".to_owned(), Some(200)),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_that_cannot_match_is_a_typed_error_naming_it() {
    let s = setup();
    let wire = s.forwarder.wire();
    let typo = wire
        .fail_once("POST /session/{id}/abrt", 500, "")
        .unwrap_err();
    assert!(
        typo.to_string().contains("POST /session/{id}/abrt"),
        "{typo}"
    );
    let placeholder = wire.delay("GET /session/{nope}", Duration::from_secs(1));
    assert!(placeholder.unwrap_err().to_string().contains("{nope}"));
    let status = wire.fail_once("POST /session", 99, "").unwrap_err();
    assert!(status.to_string().contains("99"), "{status}");
    let event = wire.drop_event_stream_at("session.idel", 1).unwrap_err();
    assert!(event.to_string().contains("session.idel"), "{event}");
    let zero = wire.drop_event_stream_at("session.idle", 0).unwrap_err();
    assert!(zero.to_string().contains("from 1"), "{zero}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_products_event_stream_is_dropped_now_or_at_an_event_and_reconnects() {
    let s = setup();
    let forwarded = s.forwarder.url();
    let wire = s.forwarder.wire();
    let mut stream = Raw::subscribe(&forwarded).await;
    let mut direct = Raw::subscribe(&s.agent.base).await;
    assert_eq!(wire.drop_event_stream_now(), 1);
    let (frames, end) = stream.until(|_| false).await;
    assert!(frames.is_empty(), "{frames:?}");
    assert_eq!(end, Some(true), "a dropped stream breaks, it does not end");

    // Once: a new stream stays, until the first session.idle it would deliver.
    let mut stream = Raw::subscribe(&forwarded).await;
    wire.drop_event_stream_at("session.idle", 1).unwrap();
    let session = new_session(&s.agent).await;
    prompt_via(&forwarded, &session).await;
    let (by_agent, _) = direct.until(idle_of(&session)).await;
    let (frames, end) = stream.until(|_| false).await;
    assert_eq!(end, Some(true));
    let idle = by_agent
        .iter()
        .position(|f| kind(f) == "session.idle")
        .unwrap();
    assert_eq!(
        frames,
        by_agent[..idle],
        "everything before the drop, as it was"
    );
    assert!(!wire.counters().events.contains_key("session.idle"));

    let mut stream = Raw::subscribe(&forwarded).await;
    prompt_via(&forwarded, &session).await;
    let (frames, end) = stream.until(idle_of(&session)).await;
    assert!(end.is_none() && kind(frames.last().unwrap()) == "session.idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gone_agent_answers_502_naming_the_cause_and_a_new_one_is_found() {
    let s = setup();
    let forwarded = s.forwarder.url();
    let mut stream = Raw::subscribe(&forwarded).await;
    let Setup {
        home,
        agent,
        forwarder,
    } = s;
    agent.stop();
    let (_, end) = stream.until(|_| false).await;
    assert!(end.is_some(), "the product's stream ends with the agent's");

    let response = http()
        .get(format!("{forwarded}/session"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 502);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    let error = body["error"].as_str().unwrap();
    assert!(
        error.starts_with("live-forwarder: upstream http://127.0.0.1:[port] did not answer: "),
        "{error}"
    );
    assert!(error.to_lowercase().contains("connect"), "{error}");
    assert_eq!(
        forwarder.wire().requests().last().unwrap().status,
        Some(502)
    );

    let again = Agent::ready(home.path());
    forwarder.retarget(&again.base).unwrap();
    assert_eq!(get(&format!("{forwarded}/global/health")).await.0, 200);
}

/// An upgrade (a PTY's websocket) passes too: the forwarder answers the agent's 101 and joins
/// the two connections both ways. The agent here is a raw server that echoes after its 101.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgraded_connection_is_joined_both_ways() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn head(socket: &mut tokio::net::TcpStream) -> String {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            assert_eq!(
                socket.read(&mut byte).await.unwrap(),
                1,
                "the head ended early"
            );
            head.push(byte[0]);
        }
        String::from_utf8(head).unwrap()
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let upstream = format!("http://{}", listener.local_addr().unwrap());
    let agent = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let request = head(&mut socket).await.to_lowercase();
        assert!(request.starts_with("get /pty/pty_1/connect "), "{request}");
        assert!(request.contains("upgrade: echo"), "{request}");
        socket
            .write_all(
                b"HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: echo\r\n\r\n",
            )
            .await
            .unwrap();
        let mut buf = [0u8; 64];
        loop {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            socket.write_all(&buf[..n]).await.unwrap();
        }
    });
    let forwarder = Forwarder::start(&upstream).unwrap();
    let address = forwarder.url().trim_start_matches("http://").to_owned();
    let mut product = tokio::net::TcpStream::connect(&address).await.unwrap();
    product
        .write_all(
            format!(
                "GET /pty/pty_1/connect HTTP/1.1\r\nhost: {address}\r\nconnection: upgrade\r\n\
                 upgrade: echo\r\n\r\n"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let response = tokio::time::timeout(ceiling(10.0), head(&mut product))
        .await
        .expect("the 101 within the ceiling");
    assert!(response.starts_with("HTTP/1.1 101"), "{response}");
    for word in ["ping", "pong and more"] {
        product.write_all(word.as_bytes()).await.unwrap();
        let mut echoed = vec![0u8; word.len()];
        tokio::time::timeout(ceiling(10.0), product.read_exact(&mut echoed))
            .await
            .expect("the echo within the ceiling")
            .unwrap();
        assert_eq!(echoed, word.as_bytes());
    }
    drop(product);
    tokio::time::timeout(ceiling(10.0), agent)
        .await
        .expect("the agent's side closes with the product's")
        .unwrap();
    let logged = forwarder.wire().requests();
    assert_eq!(logged[0].route, "/pty/{ptyID}/connect");
    assert_eq!(logged[0].status, Some(101));
}
