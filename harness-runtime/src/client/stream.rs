//! The event stream: bytes → bounded SSE frames (`eventsource-stream`) → typed [`Event`]s, with
//! a silence watchdog.
//!
//! Reconnect policy: none. OpenCode replays nothing, so a reconnect mid-turn could miss the very
//! event that ends the turn; a stream that ends while something is awaited is reported as
//! [`ClientError::StreamEnded`] naming what was pending. Between turns nothing needs to be kept:
//! every turn makes its own subscription (and waits for `server.connected`) before posting.
//!
//! Memory bound: one frame may hold at most [`StreamOptions::max_frame_bytes`]; more is
//! [`ClientError::FrameTooLarge`]. Only whole lines are handed to the SSE parser, which keeps
//! its work linear in the frame size. A stream that ends inside a frame is
//! [`ClientError::TruncatedFrame`] (the SSE parser alone would drop the partial frame silently);
//! bytes that are not UTF-8 are [`ClientError::Decode`] at once (the parser alone would wait for
//! the rest of the character forever, buffering everything after it).

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use super::error::ClientError;
use super::events::Event;
use crate::redact::Redactor;

/// Default silence ceiling (before scaling): three missed heartbeats.
pub const DEFAULT_SILENCE: Duration = Duration::from_secs(30);
/// Default bound of one frame.
pub const DEFAULT_MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// Bounds of one subscription.
#[derive(Clone, Debug)]
pub struct StreamOptions {
    /// Longest time without any frame (heartbeats count) before [`ClientError::StreamSilent`].
    pub(crate) silence_ceiling: Duration,
    /// Largest accepted frame in bytes.
    pub(crate) max_frame_bytes: usize,
}

impl StreamOptions {
    /// Sets the longest time without any frame (heartbeats count) before
    /// [`ClientError::StreamSilent`], used as given.
    pub fn silence_ceiling(mut self, ceiling: Duration) -> Self {
        self.silence_ceiling = ceiling;
        self
    }

    /// Sets the largest accepted frame, in bytes.
    pub fn max_frame_bytes(mut self, bytes: usize) -> Self {
        self.max_frame_bytes = bytes;
        self
    }
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self {
            silence_ceiling: crate::settings::scaled(DEFAULT_SILENCE),
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES,
        }
    }
}

type BoxedEvents = Pin<Box<dyn Stream<Item = Result<Event, ClientError>> + Send>>;

/// A typed event subscription. Read it with [`EventStream::next_event`].
pub struct EventStream {
    inner: BoxedEvents,
    options: StreamOptions,
    finished: bool,
}

impl std::fmt::Debug for EventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventStream")
            .field("options", &self.options)
            .field("finished", &self.finished)
            .finish()
    }
}

/// Tracks where frames end in a byte stream (a blank line ends a frame).
#[derive(Default)]
struct FrameTracker {
    frame_bytes: usize,
    line_empty: bool,
    started: bool,
}

impl FrameTracker {
    /// Scans `bytes`; on a frame exceeding `limit`, returns the offset in `bytes` where that
    /// frame starts (0 when it started in an earlier chunk).
    fn scan(&mut self, bytes: &[u8], limit: usize) -> Option<usize> {
        if !self.started {
            self.started = true;
            self.line_empty = true;
        }
        let mut frame_start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            match b {
                b'\n' => {
                    if self.line_empty {
                        self.frame_bytes = 0;
                        frame_start = i + 1;
                    }
                    self.line_empty = true;
                }
                b'\r' => {}
                _ => {
                    self.line_empty = false;
                    self.frame_bytes += 1;
                    if self.frame_bytes > limit {
                        return Some(frame_start);
                    }
                }
            }
        }
        None
    }
}

struct Guard<S> {
    inner: S,
    /// Bytes after the last newline seen: a line still arriving.
    partial: BytesMut,
    /// Whole lines not handed on yet.
    lines: Bytes,
    tracker: FrameTracker,
    limit: usize,
    done: bool,
    /// An error to report once the complete lines before it were handed on.
    failed: Option<ClientError>,
}

/// Whole lines that are not UTF-8: the SSE parser would wait for the rest of a character that
/// never comes and swallow every later byte, so the stream would only look silent.
fn not_utf8(err: std::str::Utf8Error) -> ClientError {
    ClientError::Decode {
        what: "event stream".into(),
        path: ".".into(),
        message: format!("not UTF-8 ({err}); the server must send UTF-8 text"),
    }
}

/// Hands lines on one at a time, bounds the frame size, checks UTF-8, and reports a truncated
/// last frame. One line at a time because the SSE parser copies what follows each line it
/// consumes: a chunk of many lines would cost it quadratic time.
fn guard<S>(inner: S, limit: usize) -> impl Stream<Item = Result<Bytes, ClientError>> + Send
where
    S: Stream<Item = Result<Bytes, ClientError>> + Send + Unpin + 'static,
{
    let state = Guard {
        inner,
        partial: BytesMut::new(),
        lines: Bytes::new(),
        tracker: FrameTracker::default(),
        limit,
        done: false,
        failed: None,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if !st.lines.is_empty() {
                let end = st
                    .lines
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(st.lines.len(), |i| i + 1);
                let line = st.lines.split_to(end);
                return Some((Ok(line), st));
            }
            if let Some(e) = st.failed.take() {
                st.done = true;
                return Some((Err(e), st));
            }
            if st.done {
                return None;
            }
            let whole = match st.inner.next().await {
                Some(Ok(chunk)) => match st.tracker.scan(&chunk, st.limit) {
                    Some(start) => {
                        // Hand on the whole frames before the oversized one, then fail. When
                        // it began in an earlier chunk, `partial` holds a piece of it: dropped.
                        st.failed = Some(ClientError::FrameTooLarge { limit: st.limit });
                        if start == 0 {
                            st.partial.clear();
                            continue;
                        }
                        st.partial.extend_from_slice(&chunk[..start]);
                        st.partial.split().freeze()
                    }
                    None => {
                        // Only the new chunk is searched: `partial` has no newline.
                        let Some(last_nl) = chunk.iter().rposition(|&b| b == b'\n') else {
                            st.partial.extend_from_slice(&chunk);
                            continue;
                        };
                        let before = st.partial.len();
                        st.partial.extend_from_slice(&chunk);
                        st.partial.split_to(before + last_nl + 1).freeze()
                    }
                },
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
                None => {
                    st.done = true;
                    if st.tracker.frame_bytes > 0 {
                        let bytes = st.tracker.frame_bytes;
                        return Some((Err(ClientError::TruncatedFrame { bytes }), st));
                    }
                    return None;
                }
            };
            match std::str::from_utf8(&whole) {
                Ok(_) => st.lines = whole,
                Err(e) => {
                    // The lines before the first bad one still count.
                    let keep = whole[..e.valid_up_to()]
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    st.lines = whole.slice(..keep);
                    st.failed = Some(not_utf8(e));
                }
            }
        }
    })
}

impl EventStream {
    /// Parses a raw SSE byte stream (an HTTP body, a recording, a hand-made test stream).
    pub fn from_bytes<S>(bytes: S, options: StreamOptions, redactor: Arc<Redactor>) -> Self
    where
        S: Stream<Item = Result<Bytes, ClientError>> + Send + 'static,
    {
        let guarded = guard(Box::pin(bytes), options.max_frame_bytes);
        let events = guarded.eventsource().map(move |item| match item {
            Ok(frame) => Event::parse(&frame.data, &redactor),
            Err(EventStreamError::Transport(e)) => Err(e),
            Err(EventStreamError::Utf8(e)) => Err(ClientError::decode(
                &redactor,
                "event stream",
                ".",
                &format!("not UTF-8: {e}"),
            )),
            Err(EventStreamError::Parser(e)) => Err(ClientError::decode(
                &redactor,
                "event stream",
                ".",
                &format!("not server-sent events: {e}"),
            )),
        });
        Self {
            inner: Box::pin(events),
            options,
            finished: false,
        }
    }

    /// Parses a whole recording held in memory.
    pub fn from_recording(text: &str, options: StreamOptions, redactor: Arc<Redactor>) -> Self {
        let bytes = Bytes::copy_from_slice(text.as_bytes());
        Self::from_bytes(futures::stream::iter([Ok(bytes)]), options, redactor)
    }

    /// The next event; `Ok(None)` when the stream ended cleanly (between frames). After an
    /// error the stream is finished. Silence past the ceiling is [`ClientError::StreamSilent`].
    pub async fn next_event(&mut self) -> Result<Option<Event>, ClientError> {
        if self.finished {
            return Ok(None);
        }
        let after = self.options.silence_ceiling;
        let item = match tokio::time::timeout(after, self.inner.next()).await {
            Ok(item) => item,
            Err(_) => {
                self.finished = true;
                return Err(ClientError::StreamSilent {
                    after,
                    pending: "the next event".to_string(),
                });
            }
        };
        match item {
            Some(Ok(event)) => Ok(Some(event)),
            Some(Err(e)) => {
                self.finished = true;
                Err(e)
            }
            None => {
                self.finished = true;
                Ok(None)
            }
        }
    }

    /// Waits for `server.connected` (the first frame): from then on no event is missed.
    pub async fn expect_connected(&mut self) -> Result<(), ClientError> {
        match self.next_event().await {
            Ok(Some(Event::ServerConnected)) => Ok(()),
            Ok(Some(other)) => Err(ClientError::Decode {
                what: "event stream".into(),
                path: "type".into(),
                message: format!("expected server.connected first, got {}", other.type_name()),
            }),
            Ok(None) => Err(ClientError::StreamEnded {
                pending: "server.connected".into(),
            }),
            Err(ClientError::StreamSilent { after, .. }) => Err(ClientError::StreamSilent {
                after,
                pending: "server.connected".into(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Drains the stream into a list (for recordings and tests): stops at the first error.
    pub async fn collect_all(mut self) -> (Vec<Event>, Option<ClientError>) {
        let mut out = Vec::new();
        loop {
            match self.next_event().await {
                Ok(Some(e)) => out.push(e),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e)),
            }
        }
    }
}
