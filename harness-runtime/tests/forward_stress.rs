//! Thousands of events through the forwarder to a slow reader arrive identical and in order to
//! the direct stream: a hand-written event stream of every frame shape cut at random places,
//! held at a wire gate midway; and the fixture agent's streams over a hundred turns.

mod fixture_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use fixture_common::*;
use futures::StreamExt;
use harness_runtime::fixture::{Fault, FixtureControl};
use harness_runtime::gates::WirePoint;
use harness_runtime::testing::Forwarder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A small deterministic generator (xorshift64*): the same stream for every subscriber.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Events in the hand-written stream, and how many of them are `session.idle`.
const EVENTS: u64 = 5_000;
const IDLE_EVERY: u64 = 1_000;

/// The whole stream: `EVENTS` frames of every shape the grammar allows (LF, CRLF, several data
/// lines, comments between them), small and large, the same bytes every time.
fn stream_bytes() -> Vec<u8> {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for seq in 0..EVENTS {
        let kind = if seq % IDLE_EVERY == IDLE_EVERY - 1 {
            "session.idle"
        } else {
            "message.part.delta"
        };
        let size = match random.below(100) {
            0 => 64 * 1024 + random.below(64 * 1024),
            1..=9 => 4096 + random.below(8192),
            _ => random.below(400),
        };
        let filler: String = (0..size)
            .map(|i| char::from(b'a' + ((seq + i) % 26) as u8))
            .collect();
        let json = format!(
            "{{\"type\":\"{kind}\",\"properties\":{{\"seq\":{seq},\"delta\":\"{filler}\"}}}}"
        );
        match random.below(10) {
            0 => out.extend_from_slice(format!("data: {json}\r\n\r\n").as_bytes()),
            1 => {
                // Split between two tokens: the joined lines are the same JSON.
                let (head, tail) = json.split_at(json.find(',').unwrap() + 1);
                out.extend_from_slice(format!("data: {head}\ndata:{tail}\n\n").as_bytes());
            }
            2 => {
                out.extend_from_slice(format!(": keep-alive {seq}\n\ndata: {json}\n\n").as_bytes())
            }
            _ => out.extend_from_slice(format!("data: {json}\n\n").as_bytes()),
        }
    }
    out
}

/// A loopback server answering every request with `body` as an event stream (ended by closing
/// the connection), written in pieces of random sizes.
async fn serve(body: Arc<Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut seed = 1;
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let body = body.clone();
            seed += 1;
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let response = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                                cache-control: no-cache\r\nconnection: close\r\n\r\n";
                if socket.write_all(response.as_bytes()).await.is_err() {
                    return;
                }
                let mut random = Random(seed);
                let mut at = 0;
                while at < body.len() {
                    let end = (at + 1 + random.below(16 * 1024) as usize).min(body.len());
                    if socket.write_all(&body[at..end]).await.is_err() {
                        return;
                    }
                    at = end;
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    base
}

/// Subscribes to `<base>/event`: the subscription exists once the response's head arrived.
async fn subscribe(base: &str) -> reqwest::Response {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{base}/event"))
        .send()
        .await
        .expect("subscribe");
    assert_eq!(response.status(), 200);
    response
}

/// Reads `response` to its end, or to where `done` (given what arrived and where the new bytes
/// start) says the wanted bytes end; pauses a millisecond every `slow_every` bytes (0: never).
/// `read` counts what arrived so far.
async fn read(
    response: reqwest::Response,
    slow_every: usize,
    read: Arc<AtomicU64>,
    done: impl Fn(&[u8], usize) -> Option<usize>,
) -> Vec<u8> {
    let mut body = response.bytes_stream();
    let mut all = Vec::new();
    let mut since_pause = 0;
    while let Some(chunk) = body.next().await {
        let chunk: Bytes = chunk.expect("the stream did not break");
        let new = all.len();
        all.extend_from_slice(&chunk);
        read.store(all.len() as u64, Ordering::SeqCst);
        if let Some(end) = done(&all, new) {
            all.truncate(end);
            return all;
        }
        since_pause += chunk.len();
        if slow_every > 0 && since_pause >= slow_every {
            since_pause = 0;
            // The reader's own pace, not a synchronisation: it reads slower than the writer.
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    all
}

async fn read_all(base: String, slow_every: usize, counter: Arc<AtomicU64>) -> Vec<u8> {
    read(subscribe(&base).await, slow_every, counter, |_, _| None).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_events_reach_a_slow_reader_identical_and_in_order_through_a_held_gate() {
    let started = Instant::now();
    let expected = Arc::new(stream_bytes());
    let base = serve(expected.clone()).await;
    let forwarder = Forwarder::start(&base).expect("start the forwarder");
    let third_idle = forwarder.gates().arm_nth(
        WirePoint::parse("event session.idle").unwrap(),
        std::num::NonZeroU32::new(3).unwrap(),
    );

    let direct_read = Arc::new(AtomicU64::new(0));
    let forwarded_read = Arc::new(AtomicU64::new(0));
    let direct = tokio::spawn(read_all(base.clone(), 0, direct_read.clone()));
    let forwarded = tokio::spawn(read_all(forwarder.url(), 32 * 1024, forwarded_read.clone()));

    third_idle
        .wait_until_entered_within(Duration::from_secs(60))
        .await
        .unwrap();
    let direct = tokio::time::timeout(ceiling(60.0), direct)
        .await
        .expect("the direct reader ends while the forwarded stream is held")
        .unwrap();
    assert_eq!(direct, *expected, "the direct stream is the server's");
    let held_at = forwarded_read.load(Ordering::SeqCst);
    assert!(
        held_at < expected.len() as u64,
        "the held stream delivered everything ({held_at} bytes)"
    );
    third_idle.release();
    let forwarded = tokio::time::timeout(ceiling(60.0), forwarded)
        .await
        .expect("the forwarded reader ends after the release")
        .unwrap();
    assert_eq!(forwarded.len(), direct.len());
    if let Some(at) = forwarded.iter().zip(&direct).position(|(a, b)| a != b) {
        panic!("the forwarded stream differs from the direct one at byte {at}");
    }
    let counters = forwarder.wire().counters();
    assert_eq!(counters.events["session.idle"], EVENTS / IDLE_EVERY);
    assert_eq!(
        counters.events["message.part.delta"],
        EVENTS - EVENTS / IDLE_EVERY
    );
    println!(
        "stress: {EVENTS} events, {} MiB, held at byte {held_at} then released, identical, in \
         {:.2?}",
        expected.len() / (1024 * 1024),
        started.elapsed()
    );
}

/// The frames of `bytes` (cut at blank lines), heartbeats aside.
fn frames(bytes: &[u8]) -> Vec<&[u8]> {
    let mut frames = Vec::new();
    let mut rest = bytes;
    while let Some(end) = rest.windows(2).position(|w| w == b"\n\n") {
        let (frame, tail) = rest.split_at(end + 2);
        if !frame.windows(16).any(|w| w == b"server.heartbeat") {
            frames.push(frame);
        }
        rest = tail;
    }
    frames
}

/// The title of the session created after the last turn: readers stop at its event.
const SENTINEL: &[u8] = b"\"title\":\"the end of the stress\"";

/// Where the frame naming [`SENTINEL`] ends in `all`, if it arrived whole (`new`: where the
/// bytes not searched yet start; the search goes back one frame, which the fixture's are not
/// longer than).
fn sentinel_end(all: &[u8], new: usize) -> Option<usize> {
    let from = new.saturating_sub(16 * 1024);
    let at = from
        + all[from..]
            .windows(SENTINEL.len())
            .position(|w| w == SENTINEL)?;
    let end = all[at..].windows(2).position(|w| w == b"\n\n")?;
    Some(at + end + 2)
}

async fn read_until_sentinel(response: reqwest::Response, slow_every: usize) -> Vec<u8> {
    let all = read(response, slow_every, Arc::default(), sentinel_end).await;
    assert!(
        all.ends_with(b"\n\n") && sentinel_end(&all, 0).is_some(),
        "the stream ended before the last session"
    );
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_turns_of_the_fixture_agent_reach_a_slow_reader_as_they_reach_a_direct_one() {
    const TURNS: usize = 100;
    let started = Instant::now();
    let home = tempfile::tempdir().unwrap();
    // Turns as fast as the agent goes: no wait for a listener, no lag before an answer.
    FixtureControl::attached_to(home.path())
        .unwrap()
        .inject(Fault::TurnPacing {
            listener_grace: Duration::ZERO,
            step: Duration::ZERO,
            answer_lag: Duration::ZERO,
        })
        .unwrap();
    let agent = Agent::ready(home.path());
    let forwarder = Forwarder::start(&agent.base).expect("start the forwarder");
    let session = new_session(&agent).await;
    let fast = tokio::spawn(read_until_sentinel(subscribe(&agent.base).await, 0));
    let slow = tokio::spawn(read_until_sentinel(subscribe(&forwarder.url()).await, 2048));
    for _ in 0..TURNS {
        // Blocking: a turn's events are all out when it answers.
        let url = format!("{}/session/{session}/message", forwarder.url());
        assert_eq!(post(&url, text_prompt("hello")).await.0, 200);
    }
    let (status, _) = post(
        &agent.url("/session"),
        serde_json::json!({"title": "the end of the stress"}),
    )
    .await;
    assert_eq!(status, 200);
    let by_agent = tokio::time::timeout(ceiling(60.0), fast)
        .await
        .expect("the direct reader saw every turn")
        .unwrap();
    let by_forwarder = tokio::time::timeout(ceiling(60.0), slow)
        .await
        .expect("the slow reader saw every turn")
        .unwrap();
    let (a, b) = (frames(&by_agent), frames(&by_forwarder));
    let first = |frames: &[&[u8]]| {
        frames
            .iter()
            .position(|f| f.windows(15).any(|w| w == b"message.updated"))
            .expect("a turn's events")
    };
    let (a, b) = (&a[first(&a)..], &b[first(&b)..]);
    assert!(a.len() > 10 * TURNS, "{} frames", a.len());
    assert_eq!(b.len(), a.len(), "frames through the forwarder and direct");
    if let Some(at) = a.iter().zip(b).position(|(x, y)| x != y) {
        panic!("frame {at} differs");
    }
    println!(
        "stress: {TURNS} fixture turns, {} events, identical through the forwarder, in {:.2?}",
        a.len(),
        started.elapsed()
    );
}
