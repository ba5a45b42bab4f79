//! One scenario's timeline in memory: entries in the order they happened, repeats in a row
//! merged, capped so a runaway stream cannot make the report unreadable or its write slow. Text
//! is stored raw and redacted once, by the report.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::collected::{Collected, KeptRoot, SnapshotDiff};
use super::entry::{Entry, Lane};

/// A scenario's timeline keeps at most this many entries (repeats in a row count as one).
const MAX_ENTRIES: usize = 4000;

/// What one scenario collects.
#[derive(Debug)]
pub(crate) struct Collector {
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    collected: Collected,
    dropped: u64,
    /// Where the timeline starts, after `started`: moved by [`Collector::restart`].
    offset_ms: f64,
}

impl Collector {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Collector {
            started: Instant::now(),
            state: Mutex::default(),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds an entry stamped now, or counts it on the last one if it repeats it.
    pub(super) fn push(&self, lane: Lane, kind: &str, key: Option<&str>, text: String) {
        let mut state = self.state();
        let at_ms = self.started.elapsed().as_secs_f64() * 1000.0 - state.offset_ms;
        if let Some(last) = state.collected.entries.last_mut() {
            if last.lane == lane
                && last.kind == kind
                && last.text == text
                && last.key.as_deref() == key
            {
                last.count += 1;
                return;
            }
        }
        if state.collected.entries.len() >= MAX_ENTRIES {
            state.dropped += 1;
            return;
        }
        state.collected.entries.push(Entry {
            at_ms: (at_ms * 10.0).round() / 10.0,
            lane,
            kind: kind.to_owned(),
            text,
            key: key.map(str::to_owned),
            count: 1,
        });
    }

    /// Starts the timeline again, empty, from now: an exploring scenario's report shows the run
    /// it presents (its last), not every run before it folded together.
    pub(crate) fn restart(&self) {
        let offset_ms = self.started.elapsed().as_secs_f64() * 1000.0;
        *self.state() = State {
            offset_ms,
            ..State::default()
        };
    }

    /// Keeps `diff` as the scenario's snapshot mismatch (the last one wins).
    pub(super) fn set_snapshot(&self, diff: SnapshotDiff) {
        self.state().collected.snapshot = Some(diff);
    }

    pub(super) fn add_kept_root(&self, kept: KeptRoot) {
        self.state().collected.kept_roots.push(kept);
    }

    /// Everything collected, and a last entry saying how much was left out.
    pub(crate) fn take(&self) -> Collected {
        let mut state = self.state();
        let mut collected = std::mem::take(&mut state.collected);
        if state.dropped > 0 {
            let at_ms = collected.entries.last().map_or(0.0, |e| e.at_ms);
            collected.entries.push(Entry {
                at_ms,
                lane: Lane::Teardown,
                kind: "truncated".to_owned(),
                text: format!("{} more entries were left out", state.dropped),
                key: None,
                count: 1,
            });
        }
        collected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_restarted_timeline_holds_only_what_came_after_from_zero() {
        let collector = Collector::new();
        collector.push(Lane::Turn, "event", None, "first run".into());
        // Time passes, so a timeline not restarted from zero would show it.
        std::thread::sleep(std::time::Duration::from_millis(30));
        collector.restart();
        collector.push(Lane::Turn, "event", None, "last run".into());
        let entries = collector.take().entries;
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].text, "last run");
        assert!(entries[0].at_ms < 30.0, "{}", entries[0].at_ms);
    }
}
