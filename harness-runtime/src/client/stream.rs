//! The event stream: bytes → bounded SSE frames (the shared [`Splitter`], parsed by
//! `eventsource-stream`) → typed [`Event`]s, with a silence watchdog.
//!
//! Reconnect policy: none. OpenCode replays nothing, so a reconnect mid-turn could miss the very
//! event that ends the turn; a stream that ends while something is awaited is reported as
//! [`ClientError::StreamEnded`] naming what was pending. Between turns nothing needs to be kept:
//! every turn makes its own subscription (and waits for `server.connected`) before posting.
//!
//! Memory bound: one frame may hold at most [`StreamOptions::max_frame_bytes`]; more is
//! [`ClientError::FrameTooLarge`]. Only whole frames are handed to the SSE parser, one line at
//! a time, which keeps its work linear in the frame size. A stream that ends inside a frame is
//! [`ClientError::TruncatedFrame`] (the SSE parser alone would drop the partial frame silently);
//! bytes that are not UTF-8 are [`ClientError::Decode`] at once (the parser alone would wait for
//! the rest of the character forever, buffering everything after it).

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, Bytes};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::{Stream, StreamExt};

use super::error::ClientError;
use super::events::Event;
use crate::redact::Redactor;
use crate::sse::Splitter;

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

/// Cuts the byte stream into frames with the shared splitter and hands each frame's lines on,
/// bounding the frame size, checking UTF-8 as bytes arrive, and reporting a truncated last frame.
struct Guard<S> {
    inner: S,
    frames: Splitter,
    /// Lines of whole frames not handed on yet.
    lines: VecDeque<Bytes>,
    /// The start of a character whose other bytes have not arrived yet (at most 3 bytes).
    unfinished_char: Vec<u8>,
    limit: usize,
    done: bool,
    /// An error to report once the whole frames before it were handed on.
    failed: Option<ClientError>,
}

/// Bytes that are not UTF-8: the SSE parser would wait for the rest of a character that never
/// comes and swallow every later byte, so the stream would only look silent.
fn not_utf8(err: std::str::Utf8Error) -> ClientError {
    ClientError::Decode {
        what: "event stream".into(),
        path: ".".into(),
        message: format!("not UTF-8 ({err}); the server must send UTF-8 text"),
    }
}

/// A frame's lines, each with its line end. A line ending in a lone CR gets LF instead: the SSE
/// parser waits for the byte after a CR (it could be a CRLF), which for a frame's last line is
/// the next frame, and LF ends a line the same way.
fn lines_of(mut frame: Bytes, out: &mut VecDeque<Bytes>) {
    const LF: Bytes = Bytes::from_static(b"\n");
    while let Some(at) = frame.iter().position(|&b| b == b'\n' || b == b'\r') {
        if frame[at] == b'\r' && frame.get(at + 1) != Some(&b'\n') {
            out.push_back(frame.split_to(at));
            out.push_back(LF);
            frame.advance(1);
        } else {
            let end = if frame[at] == b'\n' { at + 1 } else { at + 2 };
            out.push_back(frame.split_to(end));
        }
    }
    if !frame.is_empty() {
        out.push_back(frame);
    }
}

impl<S> Guard<S> {
    /// Takes a chunk: its UTF-8 part goes to the splitter, whole frames come out as lines, and
    /// bad bytes or a frame past the limit become the error reported after them.
    fn take(&mut self, chunk: &[u8]) {
        let joined;
        let bytes = if self.unfinished_char.is_empty() {
            chunk
        } else {
            self.unfinished_char.extend_from_slice(chunk);
            joined = std::mem::take(&mut self.unfinished_char);
            &joined[..]
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => self.frames.push(bytes),
            Err(e) => {
                let (valid, after) = bytes.split_at(e.valid_up_to());
                self.frames.push(valid);
                match e.error_len() {
                    // A character cut by the chunk's end: the next chunk may finish it.
                    None => self.unfinished_char = after.to_vec(),
                    Some(_) => self.failed = Some(not_utf8(e)),
                }
            }
        }
        while let Some(frame) = self.frames.next_counted() {
            if frame.content_bytes > self.limit {
                self.fail_too_large();
                return;
            }
            lines_of(frame.bytes, &mut self.lines);
        }
        if self.frames.partial_content_bytes() > self.limit {
            self.fail_too_large();
        }
    }

    /// The frame past the limit and all after it are dropped; the frames before it still count.
    fn fail_too_large(&mut self) {
        self.frames = Splitter::default();
        self.unfinished_char.clear();
        self.failed = Some(ClientError::FrameTooLarge { limit: self.limit });
    }

    /// At the stream's end: the bytes of a frame that never ended, if any (an unfinished
    /// character's bytes are content: none is a CR or LF).
    fn truncated(&self) -> Option<ClientError> {
        let bytes = self.frames.partial_content_bytes() + self.unfinished_char.len();
        (bytes > 0).then_some(ClientError::TruncatedFrame { bytes })
    }
}

/// Hands lines on one at a time: the SSE parser copies what follows each line it consumes, so a
/// chunk of many lines would cost it quadratic time.
fn guard<S>(inner: S, limit: usize) -> impl Stream<Item = Result<Bytes, ClientError>> + Send
where
    S: Stream<Item = Result<Bytes, ClientError>> + Send + Unpin + 'static,
{
    let state = Guard {
        inner,
        frames: Splitter::default(),
        lines: VecDeque::new(),
        unfinished_char: Vec::new(),
        limit,
        done: false,
        failed: None,
    };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(line) = st.lines.pop_front() {
                return Some((Ok(line), st));
            }
            if let Some(e) = st.failed.take() {
                st.done = true;
                return Some((Err(e), st));
            }
            if st.done {
                return None;
            }
            match st.inner.next().await {
                Some(Ok(chunk)) => st.take(&chunk),
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(e), st));
                }
                None => {
                    st.done = true;
                    st.failed = st.truncated();
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;

    fn options(max_frame_bytes: usize) -> StreamOptions {
        StreamOptions {
            silence_ceiling: Duration::from_secs(20),
            max_frame_bytes,
        }
    }

    fn open_stream(chunks: &[&'static [u8]], max_frame_bytes: usize) -> EventStream {
        let chunks: Vec<Result<Bytes, ClientError>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        let open = futures::stream::iter(chunks).chain(futures::stream::pending());
        let redactor = Arc::new(Redactor::for_scenario());
        EventStream::from_bytes(open, options(max_frame_bytes), redactor)
    }

    fn unknown(kind: &str) -> Event {
        Event::Unknown {
            kind: kind.into(),
            properties: json!({}),
        }
    }

    /// Lines may end with CR alone. A frame's last CR is known to be one once the next byte came
    /// (it is no CRLF): the event is then out, though that byte starts a line still arriving.
    #[tokio::test]
    async fn frames_of_cr_lines_are_events_once_the_splitter_cut_them() {
        let mut stream = open_stream(
            &[
                b"data: {\"type\":\"a\",\r",
                b"data: \"properties\":{}}\r\r",
                b"data: {\"type\":\"b\",\"properties\":{}}\r\r",
                b"data: {\"type\"",
            ],
            1024,
        );
        assert_eq!(stream.next_event().await.unwrap(), Some(unknown("a")));
        assert_eq!(stream.next_event().await.unwrap(), Some(unknown("b")));
    }

    /// A character cut between two chunks is one character, not bad bytes.
    #[tokio::test]
    async fn a_character_cut_by_a_chunk_boundary_is_joined() {
        let mut stream = open_stream(
            &[b"data: {\"type\":\"\xc3", b"\xa9\",\"properties\":{}}\n\n"],
            1024,
        );
        assert_eq!(stream.next_event().await.unwrap(), Some(unknown("é")));

        // A stream that ends inside the character ends inside a frame: its bytes count.
        let ended = futures::stream::iter([Ok(Bytes::from_static(b"data: \xc3"))]);
        let redactor = Arc::new(Redactor::for_scenario());
        let mut stream = EventStream::from_bytes(ended, options(1024), redactor);
        let err = stream.next_event().await.unwrap_err();
        assert!(
            matches!(err, ClientError::TruncatedFrame { bytes: 7 }),
            "{err}"
        );
    }

    /// The limit bounds a frame's content: line ends do not count, a frame at the limit passes,
    /// one byte more fails, even while the frame is still arriving.
    #[tokio::test]
    async fn the_frame_limit_counts_content_bytes_only() {
        let frame = b"data: {\"type\":\"a\",\r\ndata: \"properties\":{}}\r\n\r\n";
        let content = frame.iter().filter(|&&b| b != b'\r' && b != b'\n').count();
        let mut stream = open_stream(&[frame], content);
        assert_eq!(stream.next_event().await.unwrap(), Some(unknown("a")));

        let mut stream = open_stream(&[frame], content - 1);
        let err = stream.next_event().await.unwrap_err();
        assert!(
            matches!(err, ClientError::FrameTooLarge { limit } if limit == content - 1),
            "{err}"
        );

        let mut stream = open_stream(&[b"data: 1", b"23", b"\r\n4"], 9);
        let err = stream.next_event().await.unwrap_err();
        assert!(
            matches!(err, ClientError::FrameTooLarge { .. }),
            "an unfinished frame past the limit fails without waiting for its end: {err}"
        );
    }
}
