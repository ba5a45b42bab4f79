//! Streams: the client's event stream against a raw TCP server writing hand-made HTTP/SSE at
//! scale: every cut point of a frame, invalid JSON and UTF-8, frames of 8 MiB and far beyond the
//! bound, silence and trickles past the watchdog, resets, and 10,000 events per second. Each case
//! ends in a typed error or a correct result, under an outer ceiling, with its memory measured.
//! (`harness-runtime/tests/client_evidence/client_hostile.rs` holds the small, exact versions.)

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use harness_runtime::client::{Client, ClientError, Event, EventStream, StreamOptions};
use harness_runtime::redact::Redactor;
use harness_selftest::prerequisites::Test;
use harness_selftest::test;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::io_support::{MIB, ceiling, in_measured_child, measured_in_child, mib, report_growth};

const CONNECTED: &str =
    "data: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}\n\n";
const HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";

/// One frame of the tick stream: an event type the client does not know, kept as `Unknown`.
fn tick(seq: u64) -> String {
    format!("data: {{\"type\":\"reliability.tick\",\"properties\":{{\"seq\":{seq}}}}}\n\n")
}

fn seq_of(event: &Event) -> Option<u64> {
    match event {
        Event::Unknown { kind, properties } if kind == "reliability.tick" => {
            properties.get("seq").and_then(|s| s.as_u64())
        }
        _ => None,
    }
}

/// The server's side of one connection: writes what the case scripts, counting the bytes the
/// client accepted (a write fails once the client went away).
struct Conn {
    sock: TcpStream,
    written: Arc<AtomicU64>,
}

impl Conn {
    /// Writes `bytes`; false once the client is gone.
    async fn send(&mut self, bytes: &[u8]) -> bool {
        if self.sock.write_all(bytes).await.is_err() {
            return false;
        }
        self.written
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        true
    }

    /// Resets the connection (RST, not FIN): what a crashed peer or a middlebox looks like.
    fn reset(self) {
        let _ = self.sock.set_zero_linger();
        drop(self.sock);
    }

    /// Holds the connection open without writing until the client closes it.
    async fn hold(mut self) {
        let mut buf = [0u8; 64];
        while matches!(self.sock.read(&mut buf).await, Ok(n) if n > 0) {}
    }
}

/// A raw HTTP/1.1 server for one connection: reads the request head, answers SSE headers
/// (a close-delimited body) and `server.connected`, then runs `script`.
struct Raw {
    base: String,
    written: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Raw {
    async fn start<F, Fut>(script: F) -> Raw
    where
        F: FnOnce(Conn) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let written = Arc::new(AtomicU64::new(0));
        let counter = written.clone();
        let task = tokio::spawn(async move {
            let (mut sock, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut buf = [0u8; 4096];
            while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => seen.extend_from_slice(&buf[..n]),
                }
            }
            let mut conn = Conn {
                sock,
                written: counter,
            };
            if conn.send(HEAD.as_bytes()).await && conn.send(CONNECTED.as_bytes()).await {
                script(conn).await;
            }
        });
        Raw {
            base,
            written,
            task,
        }
    }

    async fn subscribe(&self, options: StreamOptions) -> EventStream {
        Client::new(self.base.clone(), Arc::new(Redactor::default()))
            .subscribe_with(options)
            .await
            .expect("subscribed: the server said connected")
    }

    /// Waits for the server's script to end (it must, once the client is gone).
    async fn finished(self) -> u64 {
        tokio::time::timeout(ceiling(30), self.task)
            .await
            .expect("the server's script ended after the client went away")
            .expect("the server task did not panic");
        self.written.load(Ordering::Relaxed)
    }
}

fn options(silence: Duration) -> StreamOptions {
    StreamOptions::default().silence_ceiling(silence)
}

/// Reads the stream to its end: the events and how it ended.
async fn drain(stream: EventStream) -> (Vec<Event>, Option<ClientError>) {
    stream.collect_all().await
}

/// Runs `case` under an outer ceiling, so a hang is a failure naming the case, not a stuck CI.
async fn bounded<T>(what: &str, secs: u64, case: impl Future<Output = T>) -> T {
    tokio::time::timeout(ceiling(secs), case)
        .await
        .unwrap_or_else(|_| panic!("{what}: no result within the outer ceiling: the client hung"))
}

fn ticks(range: std::ops::Range<u64>) -> String {
    range.map(tick).collect()
}

#[tokio::main(flavor = "current_thread")]
async fn a_frame_cut_at_every_byte_is_a_typed_error_or_the_whole_stream() {
    let frame = tick(10);
    let mut truncated = 0;
    let mut whole = 0;
    let started = Instant::now();
    for cut in 0..=frame.len() {
        let body = format!("{}{}", ticks(0..10), &frame[..cut]);
        let raw = Raw::start(move |mut c| async move {
            c.send(body.as_bytes()).await;
        })
        .await;
        let stream = raw.subscribe(options(ceiling(10))).await;
        let (events, end) = bounded("cut frame", 20, drain(stream)).await;
        let seqs: Vec<u64> = events.iter().filter_map(seq_of).collect();
        match end {
            None => {
                // Only a cut on a frame boundary ends cleanly, with every whole frame.
                assert!(cut == 0 || cut == frame.len(), "cut {cut}: clean end");
                assert_eq!(seqs.len(), if cut == 0 { 10 } else { 11 }, "cut {cut}");
                whole += 1;
            }
            Some(ClientError::TruncatedFrame { bytes }) => {
                assert!(bytes > 0 && bytes <= cut, "cut {cut}: {bytes} bytes");
                assert_eq!(seqs, (0..10).collect::<Vec<_>>(), "cut {cut}");
                truncated += 1;
            }
            Some(other) => panic!("cut {cut}: unexpected {other}"),
        }
        raw.finished().await;
    }
    println!(
        "streams: a {}-byte frame cut at every byte: {truncated} TruncatedFrame, {whole} whole \
         streams, 0 hangs, in {:.2?}",
        frame.len(),
        started.elapsed()
    );
    assert_eq!(truncated + whole, frame.len() + 1);
}

#[tokio::main(flavor = "current_thread")]
async fn invalid_frames_after_a_thousand_good_ones_are_decode_errors() {
    let cases: [(&str, &[u8]); 7] = [
        ("not JSON", b"data: not json\n\n"),
        ("cut JSON", b"data: {\"type\":\"session.idle\",\"prop\n\n"),
        ("no type", b"data: {\"properties\":{}}\n\n"),
        ("a JSON array", b"data: [1,2,3]\n\n"),
        ("null", b"data: null\n\n"),
        (
            "known type, wrong shape",
            b"data: {\"type\":\"session.status\",\"properties\":{\"sessionID\":\"s\",\"status\":{\"type\":5}}}\n\n",
        ),
        ("invalid UTF-8", b"data: {\"type\":\"x\xff\xfe\"}\n\n"),
    ];
    for (name, bad) in cases {
        let mut body = ticks(0..1000).into_bytes();
        body.extend_from_slice(bad);
        body.extend_from_slice(ticks(1000..1010).as_bytes());
        let raw = Raw::start(move |c| async move {
            let mut c = c;
            if c.send(&body).await {
                c.hold().await;
            }
        })
        .await;
        let stream = raw.subscribe(options(ceiling(10))).await;
        let (events, end) = bounded(name, 20, drain(stream)).await;
        let seqs: Vec<u64> = events.iter().filter_map(seq_of).collect();
        assert_eq!(
            seqs,
            (0..1000).collect::<Vec<_>>(),
            "{name}: the good frames first"
        );
        match &end {
            Some(ClientError::Decode { what, path, .. }) => {
                println!("streams: {name} after 1000 good frames: Decode at `{path}` ({what})");
            }
            other => panic!("{name}: expected a Decode error, got {other:?}"),
        }
        raw.finished().await;
    }
}

/// The frame of [`frame_of_exactly`] with an empty payload, newlines not counted.
const EMPTY_BIG: &str = "data: {\"type\":\"reliability.big\",\"properties\":{\"p\":\"\"}}";

/// An event whose frame (`data: ` and the JSON, newlines not counted) is exactly `bytes` long.
fn frame_of_exactly(bytes: usize) -> String {
    let pad = bytes - EMPTY_BIG.len();
    format!(
        "data: {{\"type\":\"reliability.big\",\"properties\":{{\"p\":\"{}\"}}}}\n\n",
        "a".repeat(pad)
    )
}

async fn frames_of_8_mib() {
    let limit = 8 * MIB as usize;
    for (size, accepted) in [(limit, true), (limit + 1, false)] {
        let body = format!("{}{}{}", tick(0), frame_of_exactly(size), tick(1));
        let raw = Raw::start(move |mut c| async move {
            c.send(body.as_bytes()).await;
        })
        .await;
        let stream = raw
            .subscribe(options(ceiling(10)).max_frame_bytes(limit))
            .await;
        let started = Instant::now();
        let (events, end) = bounded("8 MiB frame", 60, drain(stream)).await;
        let took = started.elapsed();
        raw.finished().await;
        if accepted {
            assert!(end.is_none(), "{end:?}");
            assert_eq!(events.len(), 3);
            match &events[1] {
                Event::Unknown { properties, .. } => {
                    assert_eq!(
                        properties["p"].as_str().map(str::len),
                        Some(size - EMPTY_BIG.len())
                    );
                }
                other => panic!("{other:?}"),
            }
        } else {
            assert_eq!(events.iter().filter_map(seq_of).collect::<Vec<_>>(), [0]);
            let err = end.expect("refused");
            assert!(
                matches!(err, ClientError::FrameTooLarge { limit: l } if l == limit),
                "{err}"
            );
            assert!(err.to_string().contains(&limit.to_string()), "{err}");
        }
        println!(
            "streams: frame of {size} bytes under a {limit}-byte bound: {} in {took:.2?}",
            if accepted { "parsed" } else { "FrameTooLarge" },
        );
    }
}

/// A server that writes one frame of `total` bytes (a single `data:` line, never ended) in
/// 64 KiB writes, until the client stops reading.
async fn endless_line(total: u64) -> Raw {
    Raw::start(move |mut c| async move {
        let chunk = vec![b'a'; 64 * 1024];
        if !c
            .send(b"data: {\"type\":\"x\",\"properties\":{\"p\":\"")
            .await
        {
            return;
        }
        let mut sent = 0;
        while sent < total && c.send(&chunk).await {
            sent += chunk.len() as u64;
        }
    })
    .await
}

async fn oversized(total: u64) {
    let raw = endless_line(total).await;
    let stream = raw.subscribe(options(ceiling(30))).await;
    let started = Instant::now();
    let (events, end) = bounded("oversized frame", 120, drain(stream)).await;
    let took = started.elapsed();
    let written = raw.finished().await;
    let limit = harness_runtime::client::DEFAULT_MAX_FRAME_BYTES;
    assert!(events.is_empty());
    let err = end.expect("refused");
    assert!(
        matches!(err, ClientError::FrameTooLarge { limit: l } if l == limit),
        "{err}"
    );
    assert!(err.to_string().contains(&limit.to_string()), "{err}");
    println!(
        "streams: a {} frame against the default {} bound: FrameTooLarge after {took:.2?}; the \
         server got {} out before the client hung up",
        mib(total),
        mib(limit as u64),
        mib(written),
    );
    // Refused at the bound, not after reading what the server had.
    assert!(written < total, "the client read the whole frame");
}

async fn many_small_lines() {
    // 40 MiB of `data:` lines in one frame: each line is small, the frame is not.
    let raw = Raw::start(|mut c| async move {
        let lines =
            "data: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                .repeat(1024);
        for _ in 0..(40 * MIB as usize / lines.len()) {
            if !c.send(lines.as_bytes()).await {
                return;
            }
        }
    })
    .await;
    let stream = raw.subscribe(options(ceiling(30))).await;
    let (events, end) = bounded("many-line frame", 120, drain(stream)).await;
    let written = raw.finished().await;
    assert!(events.is_empty());
    assert!(
        matches!(end, Some(ClientError::FrameTooLarge { .. })),
        "{end:?}"
    );
    println!(
        "streams: one frame of many 85-byte lines: FrameTooLarge after the server wrote {}",
        mib(written),
    );
}

#[tokio::main(flavor = "current_thread")]
async fn silence_and_trickles_past_the_watchdog_are_stream_silent() {
    let watchdog = Duration::from_millis(500);
    type Script = fn(Conn) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;
    let cases: [(&str, Script); 4] = [
        ("silence after connected", |c| Box::pin(c.hold())),
        ("silence inside a frame", |mut c| {
            Box::pin(async move {
                if c.send(b"data: {\"type\":\"x\",").await {
                    c.hold().await;
                }
            })
        }),
        ("a frame trickling one byte per 50 ms", |mut c| {
            Box::pin(async move {
                for b in b"data: {\"type\":\"x\",\"properties\":{\"p\":\""
                    .iter()
                    .cycle()
                {
                    if !c.send(&[*b]).await {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        }),
        ("comment lines every 100 ms, no event", |mut c| {
            Box::pin(async move {
                while c.send(b": keep-alive\n\n").await {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        }),
    ];
    for (name, script) in cases {
        let raw = Raw::start(script).await;
        let mut stream = raw.subscribe(options(watchdog)).await;
        let started = Instant::now();
        let err = bounded(name, 10, stream.next_event())
            .await
            .expect_err("the watchdog fired");
        let after = started.elapsed();
        drop(stream);
        assert!(
            matches!(err, ClientError::StreamSilent { after, .. } if after == watchdog),
            "{name}: {err}"
        );
        // Fired at the watchdog, not long after it (a loaded machine gets a second).
        assert!(
            after >= watchdog && after < watchdog + Duration::from_secs(1),
            "{name}: {after:?}"
        );
        println!("streams: {name}: StreamSilent after {after:.2?} (watchdog {watchdog:?})");
        raw.finished().await;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn a_reset_connection_is_a_typed_error() {
    type Script = fn(Conn) -> std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;
    let cases: [(&str, Script); 3] = [
        ("reset between frames", |mut c| {
            Box::pin(async move {
                c.send(ticks(0..100).as_bytes()).await;
                c.reset();
            })
        }),
        ("reset inside a frame", |mut c| {
            Box::pin(async move {
                c.send(ticks(0..100).as_bytes()).await;
                c.send(b"data: {\"type\":\"reliability.tick\",\"prop").await;
                c.reset();
            })
        }),
        ("reset during 100,000 events", |mut c| {
            Box::pin(async move {
                let batch = ticks(0..1000);
                for _ in 0..100 {
                    if !c.send(batch.as_bytes()).await {
                        return;
                    }
                }
                c.reset();
            })
        }),
    ];
    for (name, script) in cases {
        let raw = Raw::start(script).await;
        let stream = raw.subscribe(options(ceiling(10))).await;
        let (events, end) = bounded(name, 30, drain(stream)).await;
        let kind = match &end {
            Some(ClientError::Transport { .. }) => "Transport",
            Some(ClientError::TruncatedFrame { .. }) => "TruncatedFrame",
            // The reset may land after the last whole frame was read: a clean end between
            // frames is then all the client can know, and it reports no invented events.
            None => "a clean end",
            Some(other) => panic!("{name}: unexpected {other}"),
        };
        println!("streams: {name}: {} events, then {kind}", events.len());
        if name == "reset inside a frame" {
            assert!(end.is_some(), "{name}: a frame was cut, that is an error");
        }
        raw.finished().await;
    }
}

/// Serves `rate` tick events per second for `secs` seconds, in batches every 10 ms; the client
/// must get every one, in order.
async fn paced(rate: u64, secs: u64) {
    let total = rate * secs;
    let per_batch = rate / 100;
    let raw = Raw::start(move |mut c| async move {
        let mut tick_timer = tokio::time::interval(Duration::from_millis(10));
        tick_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let mut seq = 0;
        while seq < total {
            tick_timer.tick().await;
            let batch = ticks(seq..(seq + per_batch).min(total));
            if !c.send(batch.as_bytes()).await {
                return;
            }
            seq += per_batch;
        }
    })
    .await;
    let mut stream = raw.subscribe(options(ceiling(10))).await;
    let started = Instant::now();
    let mut next = 0u64;
    bounded("paced stream", secs * 3 + 30, async {
        while let Some(event) = stream.next_event().await.expect("no error") {
            assert_eq!(seq_of(&event), Some(next), "in order, none missing");
            next += 1;
        }
    })
    .await;
    let took = started.elapsed();
    raw.finished().await;
    println!(
        "streams: {rate} events/s for {secs} s: {next} of {total} received in order in \
         {took:.2?} ({:.0} events/s)",
        next as f64 / took.as_secs_f64(),
    );
    assert_eq!(next, total);
}

/// As fast as the server can write: the client's own ceiling.
async fn burst(total: u64) {
    let raw = Raw::start(move |mut c| async move {
        let mut seq = 0;
        while seq < total {
            if !c.send(ticks(seq..(seq + 1000).min(total)).as_bytes()).await {
                return;
            }
            seq += 1000;
        }
    })
    .await;
    let mut stream = raw.subscribe(options(ceiling(10))).await;
    let started = Instant::now();
    let mut next = 0u64;
    bounded("burst", 120, async {
        while let Some(event) = stream.next_event().await.expect("no error") {
            assert_eq!(seq_of(&event), Some(next), "in order, none missing");
            next += 1;
        }
    })
    .await;
    let took = started.elapsed();
    let written = raw.finished().await;
    println!(
        "streams: burst of {total} events ({}): all received in order in {took:.2?} ({:.0} \
         events/s, {:.1} MiB/s)",
        mib(written),
        next as f64 / took.as_secs_f64(),
        written as f64 / MIB as f64 / took.as_secs_f64(),
    );
    assert_eq!(next, total);
}

/// Runs `case` alone in a fresh process and bounds the peak resident-set growth it caused.
fn within_memory(case: &str, bound_mib: u64, secs: u64) {
    let growth = measured_in_child(&format!("streams::measured::{case}"), ceiling(secs));
    println!(
        "streams: {case}: peak RSS growth {} (bound {bound_mib} MiB)",
        mib(growth)
    );
    assert!(
        growth < bound_mib * MIB,
        "{case}: peak RSS growth {}",
        mib(growth)
    );
}

// The frame, its text and its parsed value: a few copies of the bound, never a pile.
fn frames_of_8_mib_pass_under_an_8_mib_bound_and_one_byte_more_is_refused() {
    within_memory("frames_of_8_mib", 64, 120);
}

fn a_256_mib_frame_is_refused_at_the_default_bound_with_bounded_memory() {
    within_memory("frame_of_256_mib", 96, 120);
}

fn a_4_gib_frame_is_refused_at_the_default_bound_with_bounded_memory() {
    within_memory("frame_of_4_gib", 96, 300);
}

fn a_frame_of_many_small_lines_counts_as_one_frame() {
    within_memory("many_small_lines", 96, 120);
}

// Backpressure: a slow or fast reader holds a few frames, not the stream.
fn ten_thousand_events_per_second_for_three_seconds() {
    within_memory("paced_3_s", 16, 60);
}

fn a_burst_of_two_hundred_thousand_events() {
    within_memory("burst_200_000", 16, 120);
}

fn ten_thousand_events_per_second_for_thirty_seconds() {
    within_memory("paced_30_s", 16, 120);
}

fn a_burst_of_two_million_events() {
    within_memory("burst_2_000_000", 16, 600);
}

/// The measured cases' entry points, each run alone in a fresh process by the tests above.
mod measured {
    use super::*;

    macro_rules! entry {
        ($($name:ident => $case:expr;)*) => {
            $(fn $name() {
                if in_measured_child() {
                    report_growth($case);
                }
            })*

            /// The entry points, for `main`.
            pub(super) fn tests() -> Vec<Test> {
                vec![$(test!($name)
                    .ignore("entry point: run in a fresh process by its streams:: test")),*]
            }
        };
    }

    entry! {
        frames_of_8_mib => super::frames_of_8_mib();
        frame_of_256_mib => oversized(256 * MIB);
        frame_of_4_gib => oversized(4096 * MIB);
        many_small_lines => super::many_small_lines();
        paced_3_s => paced(10_000, 3);
        paced_30_s => paced(10_000, 30);
        burst_200_000 => burst(200_000);
        burst_2_000_000 => burst(2_000_000);
    }
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(a_frame_cut_at_every_byte_is_a_typed_error_or_the_whole_stream),
        test!(invalid_frames_after_a_thousand_good_ones_are_decode_errors),
        test!(silence_and_trickles_past_the_watchdog_are_stream_silent),
        test!(a_reset_connection_is_a_typed_error),
        test!(frames_of_8_mib_pass_under_an_8_mib_bound_and_one_byte_more_is_refused),
        test!(a_256_mib_frame_is_refused_at_the_default_bound_with_bounded_memory),
        test!(a_4_gib_frame_is_refused_at_the_default_bound_with_bounded_memory)
            .ignore("heavy: a 4 GiB frame"),
        test!(a_frame_of_many_small_lines_counts_as_one_frame),
        test!(ten_thousand_events_per_second_for_three_seconds),
        test!(a_burst_of_two_hundred_thousand_events),
        test!(ten_thousand_events_per_second_for_thirty_seconds)
            .ignore("heavy: 10,000 events/s for 30 s"),
        test!(a_burst_of_two_million_events).ignore("heavy: a burst of 2,000,000 events"),
    ]
    .into_iter()
    .chain(measured::tests())
    .collect()
}
