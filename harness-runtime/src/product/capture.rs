//! A product's output: copied line by line to log files, kept in memory (bounded), and noted on
//! the run report's `product` lane.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use crate::timeline::{self, Lane};

/// How much output is kept in memory; older lines are left out first (the log files keep all).
const MAX_BYTES: usize = 4 << 20;
/// How many lines of one product go on the report's timeline, one entry each.
pub(crate) const NOTED_LINES: u64 = 200;

/// Which pipe a line came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

impl Stream {
    fn kind(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// The output of one product, stdout and stderr interleaved in arrival order, unredacted (the
/// readers redact).
#[derive(Debug)]
pub(crate) struct Capture {
    state: Mutex<State>,
    /// How many lines arrived so far.
    lines_seen: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct State {
    lines: VecDeque<(Stream, String)>,
    bytes: usize,
    /// Lines dropped from the front to stay within [`MAX_BYTES`].
    left_out: u64,
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            state: Mutex::default(),
            lines_seen: watch::channel(0).0,
        }
    }
}

impl Capture {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, stream: Stream, line: String) {
        {
            let mut state = self.state();
            state.bytes += line.len();
            state.lines.push_back((stream, line));
            while state.bytes > MAX_BYTES && state.lines.len() > 1 {
                let (_, dropped) = state.lines.pop_front().expect("more than one line");
                state.bytes -= dropped.len();
                state.left_out += 1;
            }
        }
        self.lines_seen.send_modify(|n| *n += 1);
    }

    /// Every kept line of `stream` (both when `None`), one per line, after a first line that
    /// says how many earlier lines were left out, if any.
    pub(crate) fn text(&self, stream: Option<Stream>) -> String {
        let state = self.state();
        let mut lines: Vec<&str> = Vec::new();
        let left_out = (state.left_out > 0).then(|| {
            format!(
                "[{} earlier lines left out; the log files in the agent's root have them]",
                state.left_out
            )
        });
        lines.extend(left_out.as_deref());
        lines.extend(
            state
                .lines
                .iter()
                .filter(|(s, _)| stream.is_none_or(|wanted| *s == wanted))
                .map(|(_, line)| line.as_str()),
        );
        lines.join("\n")
    }

    /// The last `n` lines of both streams.
    pub(crate) fn tail(&self, n: usize) -> String {
        let state = self.state();
        let skip = state.lines.len().saturating_sub(n);
        let lines: Vec<&str> = state
            .lines
            .iter()
            .skip(skip)
            .map(|(_, line)| line.as_str())
            .collect();
        lines.join("\n")
    }

    /// How many lines arrived so far.
    pub(crate) fn lines_seen(&self) -> u64 {
        *self.lines_seen.borrow()
    }

    /// A receiver that sees the number of lines arrived change.
    pub(crate) fn watch(&self) -> watch::Receiver<u64> {
        self.lines_seen.subscribe()
    }

    /// The first kept line at or after line number `from` (0-based, counted over everything
    /// that arrived) that contains `needle`.
    pub(crate) fn find(&self, from: u64, needle: &str) -> Option<String> {
        let state = self.state();
        let skip = from.saturating_sub(state.left_out);
        state
            .lines
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .find(|(_, line)| line.contains(needle))
            .map(|(_, line)| line.clone())
    }
}

/// Turns true once both pipes reached EOF: everything the product (and every descendant that
/// held its pipes) printed is captured. Never waited for without a ceiling: a detached
/// descendant may hold a pipe until the sweep kills it.
#[derive(Debug, Clone)]
pub(crate) struct Drained {
    stdout: watch::Receiver<bool>,
    stderr: watch::Receiver<bool>,
}

impl Drained {
    /// Whether both pipes reached EOF.
    pub(crate) fn is_done(&self) -> bool {
        *self.stdout.borrow() && *self.stderr.borrow()
    }

    /// Waits up to `ceiling` for both pipes to drain; `false` when the ceiling came first.
    pub(crate) async fn wait(&self, ceiling: Duration) -> bool {
        let (mut stdout, mut stderr) = (self.stdout.clone(), self.stderr.clone());
        let both = async {
            let _ = stdout.wait_for(|d| *d).await;
            let _ = stderr.wait_for(|d| *d).await;
        };
        tokio::time::timeout(ceiling, both).await.is_ok()
    }
}

/// Where a product's lines go besides memory.
pub(crate) struct Sinks {
    pub(crate) stdout_file: std::fs::File,
    pub(crate) stderr_file: std::fs::File,
    /// What the report's timeline entries begin with (`product 1 (node)`).
    pub(crate) label: String,
}

/// Copies both pipes into their files and `capture` on threads of their own (independent of
/// any runtime), and notes the first [`NOTED_LINES`] lines on the report's timeline when this
/// thread collects for one (each as it is read; both threads share the count).
pub(crate) fn pump(
    stdout: impl Read + Send + 'static,
    stderr: impl Read + Send + 'static,
    sinks: Sinks,
    capture: &Arc<Capture>,
) -> std::io::Result<Drained> {
    let notes = timeline::current().map(|collector| Notes {
        collector,
        label: sinks.label,
        noted: Arc::default(),
    });
    let (stdout_done, stdout_drained) = watch::channel(false);
    let (stderr_done, stderr_drained) = watch::channel(false);
    pump_one(
        stdout,
        Stream::Stdout,
        sinks.stdout_file,
        capture.clone(),
        notes.clone(),
        stdout_done,
    )?;
    pump_one(
        stderr,
        Stream::Stderr,
        sinks.stderr_file,
        capture.clone(),
        notes,
        stderr_done,
    )?;
    Ok(Drained {
        stdout: stdout_drained,
        stderr: stderr_drained,
    })
}

/// Where a pump notes the lines it reads.
#[derive(Clone)]
struct Notes {
    collector: Arc<timeline::Collector>,
    label: String,
    /// Lines noted so far, by both pumps.
    noted: Arc<AtomicU64>,
}

impl Notes {
    fn line(&self, stream: Stream, line: &str) {
        if self.noted.fetch_add(1, Ordering::Relaxed) < NOTED_LINES {
            timeline::note(Lane::Product, stream.kind(), || {
                format!("{}: {line}", self.label)
            });
        }
    }
}

fn pump_one(
    stream: impl Read + Send + 'static,
    kind: Stream,
    file: std::fs::File,
    capture: Arc<Capture>,
    notes: Option<Notes>,
    done: watch::Sender<bool>,
) -> std::io::Result<()> {
    let collector = notes.as_ref().map(|n| n.collector.clone());
    crate::process::spawn_line_pump(
        format!("live-product-{}", kind.kind()),
        stream,
        file,
        move || timeline::install_on_this_thread(collector),
        move |line| {
            if let Some(notes) = &notes {
                notes.line(kind, &line);
            }
            capture.push(kind, line);
        },
        done,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_kept_in_order_by_stream_and_found_from_a_line_number() {
        let capture = Capture::default();
        capture.push(Stream::Stdout, "one".into());
        capture.push(Stream::Stderr, "warning: two".into());
        capture.push(Stream::Stdout, "three".into());
        assert_eq!(capture.text(None), "one\nwarning: two\nthree");
        assert_eq!(capture.text(Some(Stream::Stdout)), "one\nthree");
        assert_eq!(capture.text(Some(Stream::Stderr)), "warning: two");
        assert_eq!(capture.tail(2), "warning: two\nthree");
        assert_eq!(capture.lines_seen(), 3);
        assert_eq!(capture.find(0, "t"), Some("warning: two".into()));
        assert_eq!(capture.find(2, "t"), Some("three".into()));
        assert_eq!(capture.find(3, "t"), None);
    }

    /// A runaway product keeps memory bounded: the oldest lines go, and the text says so.
    #[test]
    fn a_runaway_output_is_bounded_and_says_what_was_left_out() {
        let capture = Capture::default();
        let line = "x".repeat(1 << 20);
        for _ in 0..6 {
            capture.push(Stream::Stdout, line.clone());
        }
        capture.push(Stream::Stdout, "last".into());
        let text = capture.text(None);
        assert!(
            text.starts_with("[3 earlier lines left out; the log files"),
            "{}",
            &text[..80]
        );
        assert!(text.ends_with("\nlast"));
        assert_eq!(capture.find(0, "last"), Some("last".into()));
        assert_eq!(capture.lines_seen(), 7);
    }
}
