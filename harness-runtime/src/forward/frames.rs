//! An event stream cut into frames as its bytes arrive, and the `type` each frame carries.
//!
//! A frame ends at a blank line (lines end with LF, CRLF or CR, as the SSE grammar says). The
//! bytes are kept verbatim: a frame handed on is exactly the bytes that came in, so what the
//! product reads through the forwarder is byte for byte what the agent wrote.

use std::borrow::Cow;

use bytes::{Bytes, BytesMut};

/// Cuts a byte stream into SSE frames incrementally: [`push`](Splitter::push) what arrived, take
/// whole frames with [`next_frame`](Splitter::next_frame), and the unterminated rest with
/// [`rest`](Splitter::rest) when the stream ends.
#[derive(Debug, Default)]
pub(crate) struct Splitter {
    buffer: BytesMut,
    /// Where the search for the next line end continues (bytes before it are scanned).
    scan: usize,
    /// Where the line being scanned starts.
    line_start: usize,
}

impl Splitter {
    /// Appends bytes that arrived.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next whole frame (its blank line included), if one has arrived.
    pub(crate) fn next_frame(&mut self) -> Option<Bytes> {
        let bytes = &self.buffer[..];
        let mut i = self.scan;
        while let Some(offset) = bytes[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            let end = i + offset;
            let line_end = match bytes[end] {
                b'\n' => end + 1,
                // CR: a line end of its own unless LF follows (then the LF ends the line); at
                // the end of what arrived, the next chunk decides.
                _ => match bytes.get(end + 1) {
                    Some(b'\n') => {
                        i = end + 1;
                        continue;
                    }
                    Some(_) => end + 1,
                    None => {
                        self.scan = end;
                        return None;
                    }
                },
            };
            let line = &bytes[self.line_start..end];
            let blank = line.is_empty() || line == b"\r";
            if blank {
                let frame = self.buffer.split_to(line_end).freeze();
                self.scan = 0;
                self.line_start = 0;
                return Some(frame);
            }
            self.line_start = line_end;
            i = line_end;
        }
        self.scan = bytes.len();
        None
    }

    /// What arrived after the last whole frame, when the stream ended without a blank line.
    pub(crate) fn rest(&mut self) -> Option<Bytes> {
        self.scan = 0;
        self.line_start = 0;
        (!self.buffer.is_empty()).then(|| self.buffer.split().freeze())
    }
}

/// The event type of a frame: the `type` of the JSON in its `data` (or of its `payload`, as the
/// global stream wraps events). `None` for a frame without JSON data (a comment, a keep-alive).
pub(crate) fn event_type(frame: &[u8]) -> Option<Cow<'_, str>> {
    let mut data: Option<Cow<'_, [u8]>> = None;
    for line in frame
        .split(|&b| b == b'\n' || b == b'\r')
        .filter(|l| !l.is_empty())
    {
        let Some(value) = line.strip_prefix(b"data:") else {
            continue;
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        data = Some(match data {
            None => Cow::Borrowed(value),
            // Several data lines are one value joined by LF (rare: OpenCode writes one line).
            Some(previous) => {
                let mut joined = previous.into_owned();
                joined.push(b'\n');
                joined.extend_from_slice(value);
                Cow::Owned(joined)
            }
        });
    }
    match data? {
        Cow::Borrowed(json) => type_of(json),
        Cow::Owned(json) => type_of(&json).map(|t| Cow::Owned(t.into_owned())),
    }
}

#[derive(serde::Deserialize)]
struct Typed<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    payload: Option<Payload<'a>>,
}

#[derive(serde::Deserialize)]
struct Payload<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// The top-level `type` of `json`, else its `payload.type`. Other fields are skipped unparsed.
fn type_of(json: &[u8]) -> Option<Cow<'_, str>> {
    let typed: Typed<'_> = serde_json::from_slice(json).ok()?;
    typed.kind.or(typed.payload.and_then(|p| p.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_of(chunks: &[&[u8]]) -> Vec<Bytes> {
        let mut splitter = Splitter::default();
        let mut frames = Vec::new();
        for chunk in chunks {
            splitter.push(chunk);
            while let Some(frame) = splitter.next_frame() {
                frames.push(frame);
            }
        }
        frames.extend(splitter.rest());
        frames
    }

    #[test]
    fn frames_end_at_a_blank_line_whatever_the_line_ends_and_keep_their_bytes() {
        let stream: &[u8] =
            b"data: {\"type\":\"a\"}\n\ndata: b\r\n\r\nid: 1\rdata: c\r\r: note\n\n";
        let frames = frames_of(&[stream]);
        assert_eq!(
            frames,
            [
                &b"data: {\"type\":\"a\"}\n\n"[..],
                b"data: b\r\n\r\n",
                b"id: 1\rdata: c\r\r",
                b": note\n\n"
            ]
        );
        assert_eq!(frames.concat(), stream);
    }

    /// Cut anywhere, even between the CR and LF of a line end, the frames are the same.
    #[test]
    fn a_stream_cut_at_every_byte_gives_the_same_frames() {
        let stream: &[u8] = b"data: {\"type\":\"x\"}\r\n\r\ndata: 1\n\n\rdata: 2\r\rtail";
        let whole = frames_of(&[stream]);
        for cut in 0..=stream.len() {
            let (a, b) = stream.split_at(cut);
            assert_eq!(frames_of(&[a, b]), whole, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(frames_of(&bytewise), whole);
        assert_eq!(whole.last().unwrap(), &b"tail"[..]);
    }

    #[test]
    fn the_type_is_read_from_the_data_or_its_payload() {
        let t = |frame: &[u8]| event_type(frame).map(Cow::into_owned);
        assert_eq!(
            t(b"data: {\"id\":\"evt_1\",\"type\":\"session.idle\",\"properties\":{\"type\":\"x\"}}\n\n"),
            Some("session.idle".into())
        );
        assert_eq!(
            t(b"data: {\"directory\":\"/w\",\"payload\":{\"type\":\"permission.asked\"}}\n\n"),
            Some("permission.asked".into())
        );
        assert_eq!(
            t(b"data: {\"type\":\n data: \"split\"}\n\n"),
            None,
            "a continuation line that is not data is not joined"
        );
        assert_eq!(
            t(b"data: {\"type\":\ndata: \"joined\"}\n\n"),
            Some("joined".into())
        );
        assert_eq!(t(b": keep-alive\n\n"), None);
        assert_eq!(t(b"data: not json\n\n"), None);
        assert_eq!(
            t(b"data:{\"type\":\"esc\\u0061ped\"}\n\n"),
            Some("escaped".into())
        );
    }
}
