//! Server-sent events cut into frames as their bytes arrive: the one splitter the forwarder, the
//! observer and the client's event stream share.
//!
//! A frame ends at a blank line (lines end with LF, CRLF or CR, as the SSE grammar says). The
//! bytes are kept verbatim: a frame handed on is exactly the bytes that came in, so what the
//! product reads through the forwarder is byte for byte what the agent wrote. What a frame means
//! is read elsewhere (the client hands frames to its SSE parser).

use bytes::{Bytes, BytesMut};

/// Cuts a byte stream into SSE frames incrementally: [`push`](Splitter::push) what arrived, take
/// whole frames with [`next_frame`](Splitter::next_frame), and the unterminated rest with
/// [`rest`](Splitter::rest) when the stream ends. Every byte is scanned once.
#[derive(Debug, Default)]
pub(crate) struct Splitter {
    buffer: BytesMut,
    /// Where the search for the next line end continues (bytes before it are scanned).
    scan: usize,
    /// Where the line being scanned starts.
    line_start: usize,
    /// Content bytes (neither CR nor LF) of the frame being cut, among the bytes scanned.
    content: usize,
}

/// A whole frame, its blank line included.
#[derive(Debug, PartialEq)]
pub(crate) struct Frame {
    pub(crate) bytes: Bytes,
    /// Its bytes other than CR and LF: what a frame-size limit bounds.
    pub(crate) content_bytes: usize,
}

impl Splitter {
    /// Appends bytes that arrived.
    pub(crate) fn push(&mut self, chunk: &[u8]) {
        self.buffer.extend_from_slice(chunk);
    }

    /// The next whole frame's bytes, if one has arrived.
    pub(crate) fn next_frame(&mut self) -> Option<Bytes> {
        self.next_counted().map(|frame| frame.bytes)
    }

    /// The next whole frame with its content size, if one has arrived.
    pub(crate) fn next_counted(&mut self) -> Option<Frame> {
        let bytes = &self.buffer[..];
        let mut i = self.scan;
        while let Some(offset) = bytes[i..].iter().position(|&b| b == b'\n' || b == b'\r') {
            self.content += offset;
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
                let frame = Frame {
                    bytes: self.buffer.split_to(line_end).freeze(),
                    content_bytes: self.content,
                };
                self.restart();
                return Some(frame);
            }
            self.line_start = line_end;
            i = line_end;
        }
        self.content += bytes.len() - i;
        self.scan = bytes.len();
        None
    }

    /// Content bytes of the frame still arriving, as far as [`next_counted`](Self::next_counted)
    /// scanned (all that arrived, once it returned `None`).
    pub(crate) fn partial_content_bytes(&self) -> usize {
        self.content
    }

    /// What arrived after the last whole frame, when the stream ended without a blank line.
    pub(crate) fn rest(&mut self) -> Option<Bytes> {
        self.restart();
        (!self.buffer.is_empty()).then(|| self.buffer.split().freeze())
    }

    fn restart(&mut self) {
        self.scan = 0;
        self.line_start = 0;
        self.content = 0;
    }
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

    /// Every byte that is not a line end counts, once, whichever line ends a stream uses and
    /// however it is cut; the count starts again with each frame.
    #[test]
    fn content_bytes_count_each_frames_bytes_but_line_ends() {
        let stream: &[u8] =
            b"data: ab\r\nid: 7\r\n\r\ndata: c\rdata: d\r\r\nevent: x\n\ndata: tail";
        let mut bytewise = Splitter::default();
        let mut counts = Vec::new();
        for byte in stream.chunks(1) {
            bytewise.push(byte);
            while let Some(frame) = bytewise.next_counted() {
                counts.push(frame.content_bytes);
            }
        }
        assert_eq!(counts, [13, 14, 8]);
        assert_eq!(bytewise.partial_content_bytes(), 10);

        let mut whole = Splitter::default();
        whole.push(stream);
        let frames: Vec<Frame> = std::iter::from_fn(|| whole.next_counted()).collect();
        assert_eq!(
            frames.iter().map(|f| f.content_bytes).collect::<Vec<_>>(),
            counts
        );
        assert_eq!(whole.partial_content_bytes(), 10);
        assert_eq!(whole.rest().unwrap(), &b"data: tail"[..]);
        assert_eq!(whole.partial_content_bytes(), 0);
    }

    /// A frame that grows past any bound without ending is seen growing: the count covers what
    /// arrived so far, so a caller can stop it before the blank line comes (if ever).
    #[test]
    fn an_unfinished_frame_is_counted_as_it_grows() {
        let mut splitter = Splitter::default();
        splitter.push(b"data: 1\n\ndata: ");
        assert_eq!(splitter.next_counted().unwrap().content_bytes, 7);
        for pushed in 1..=100 {
            splitter.push(&[b'a'; 1000]);
            assert!(splitter.next_counted().is_none());
            assert_eq!(splitter.partial_content_bytes(), 6 + pushed * 1000);
        }
    }
}
