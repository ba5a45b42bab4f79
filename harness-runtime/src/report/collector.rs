//! Collecting a scenario's timeline in memory: the layers that do the work call [`note`] where
//! something happens; it costs a thread-local read when no report is written.
//!
//! The collector reaches them through a thread-local set on the scenario's trial thread and on
//! every thread of its runtime (as the panic hook's redactor does): each trial has a runtime of
//! its own, so whatever runs there works for that scenario, and nothing has to be threaded
//! through the APIs. Text is stored raw and redacted once, when the record is written.

use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::record::{Entry, KeptRoot, Lane, SnapshotDiff};

/// A scenario's timeline keeps at most this many entries (repeats in a row count as one): a
/// runaway stream must not make the report unreadable or the write slow.
const MAX_ENTRIES: usize = 4000;

/// What one scenario collected.
#[derive(Debug)]
pub(crate) struct Collector {
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<Entry>,
    dropped: u64,
    snapshot: Option<SnapshotDiff>,
    kept_roots: Vec<KeptRoot>,
}

/// What a collector holds at the end of its scenario (raw, unredacted).
#[derive(Debug, Default)]
pub(crate) struct Collected {
    pub(crate) entries: Vec<Entry>,
    pub(crate) snapshot: Option<SnapshotDiff>,
    pub(crate) kept_roots: Vec<KeptRoot>,
}

impl Collector {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Collector {
            started: Instant::now(),
            state: Mutex::default(),
        })
    }

    fn push(&self, lane: Lane, kind: &str, key: Option<&str>, text: String) {
        let at_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(last) = state.entries.last_mut() {
            if last.lane == lane
                && last.kind == kind
                && last.text == text
                && last.key.as_deref() == key
            {
                last.count += 1;
                return;
            }
        }
        if state.entries.len() >= MAX_ENTRIES {
            state.dropped += 1;
            return;
        }
        state.entries.push(Entry {
            at_ms: (at_ms * 10.0).round() / 10.0,
            lane,
            kind: kind.to_owned(),
            text,
            key: key.map(str::to_owned),
            count: 1,
        });
    }

    /// Everything collected, and a last entry saying how much was left out.
    pub(crate) fn take(&self) -> Collected {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut entries = std::mem::take(&mut state.entries);
        if state.dropped > 0 {
            let at_ms = entries.last().map_or(0.0, |e| e.at_ms);
            entries.push(Entry {
                at_ms,
                lane: Lane::Teardown,
                kind: "truncated".to_owned(),
                text: format!("{} more entries were left out", state.dropped),
                key: None,
                count: 1,
            });
        }
        Collected {
            entries,
            snapshot: state.snapshot.take(),
            kept_roots: std::mem::take(&mut state.kept_roots),
        }
    }
}

thread_local! {
    /// The collector of the scenario this thread works for, if a report is written.
    static CURRENT: RefCell<Option<Arc<Collector>>> = const { RefCell::new(None) };
}

/// Makes [`note`] on this thread record into `collector` (`None`: nowhere).
pub(crate) fn install_on_this_thread(collector: Option<Arc<Collector>>) {
    let _ = CURRENT.try_with(|current| *current.borrow_mut() = collector);
}

fn with_current(f: impl FnOnce(&Collector)) {
    let _ = CURRENT.try_with(|current| {
        if let Some(collector) = current.borrow().as_ref() {
            f(collector);
        }
    });
}

/// Whether this thread collects for a report (to skip building costly text when not).
pub(crate) fn is_collecting() -> bool {
    CURRENT
        .try_with(|current| current.borrow().is_some())
        .unwrap_or(false)
}

/// Notes that `kind` happened in `lane`, with the detail `text` (built only when collecting).
pub(crate) fn note(lane: Lane, kind: &str, text: impl FnOnce() -> String) {
    with_current(|c| c.push(lane, kind, None, text()));
}

/// Like [`note`], for one of several entries that make a span (`key`: a tool call's id).
pub(crate) fn note_keyed(lane: Lane, kind: &str, key: &str, text: impl FnOnce() -> String) {
    with_current(|c| c.push(lane, kind, Some(key), text()));
}

/// Notes that the evidence did not match its accepted snapshot.
pub(crate) fn snapshot_mismatch(file: &str, accepted: String, new: String) {
    with_current(|c| {
        c.push(Lane::Teardown, "snapshot mismatch", None, file.to_owned());
        c.state.lock().unwrap_or_else(|e| e.into_inner()).snapshot = Some(SnapshotDiff {
            file: file.to_owned(),
            accepted,
            new,
        });
    });
}

/// Notes a kept root and its server's log tail.
pub(crate) fn kept_root(path: &std::path::Path, log_tail: impl FnOnce() -> String) {
    with_current(|c| {
        let path = path.display().to_string();
        c.push(Lane::Teardown, "kept root", None, path.clone());
        let log_tail = log_tail();
        c.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .kept_roots
            .push(KeptRoot { path, log_tail });
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_reach_the_installed_collector_only_and_repeats_are_counted() {
        note(Lane::Turn, "before", String::new);
        let collector = Collector::new();
        install_on_this_thread(Some(collector.clone()));
        note(Lane::Turn, "message.part.delta", String::new);
        note(Lane::Turn, "message.part.delta", String::new);
        note_keyed(Lane::Tools, "bash running", "call_1", || "ls".into());
        install_on_this_thread(None);
        note(Lane::Turn, "after", String::new);
        let collected = collector.take();
        let kinds: Vec<(&str, u32)> = collected
            .entries
            .iter()
            .map(|e| (e.kind.as_str(), e.count))
            .collect();
        assert_eq!(kinds, [("message.part.delta", 2), ("bash running", 1)]);
        assert_eq!(collected.entries[1].key.as_deref(), Some("call_1"));
    }

    #[test]
    fn a_runaway_timeline_is_capped_and_says_so() {
        let collector = Collector::new();
        for i in 0..MAX_ENTRIES + 5 {
            collector.push(Lane::Turn, "event", None, i.to_string());
        }
        let entries = collector.take().entries;
        assert_eq!(entries.len(), MAX_ENTRIES + 1);
        assert_eq!(entries.last().unwrap().text, "5 more entries were left out");
    }
}
