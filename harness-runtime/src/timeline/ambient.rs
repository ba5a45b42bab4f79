//! The timeline of the scenario this thread works for, and what the layers call to write to it
//! (why it is a thread-local: see the module's doc).

use std::cell::RefCell;
use std::sync::Arc;

use super::collected::{KeptRoot, SnapshotDiff};
use super::collector::Collector;
use super::entry::Lane;

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

/// The collector of this thread, to install on a thread of its own that notes for the same
/// scenario (one reading a child's output).
pub(crate) fn current() -> Option<Arc<Collector>> {
    CURRENT
        .try_with(|current| current.borrow().clone())
        .ok()
        .flatten()
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
        c.set_snapshot(SnapshotDiff {
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
        c.add_kept_root(KeptRoot {
            path,
            log_tail: log_tail(),
        });
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
    fn a_kept_root_and_a_snapshot_mismatch_are_on_the_timeline_and_kept_whole() {
        let collector = Collector::new();
        install_on_this_thread(Some(collector.clone()));
        kept_root(std::path::Path::new("/tmp/live-a__b-1"), || {
            "last words".into()
        });
        snapshot_mismatch("a__b.snap", "old".into(), "new".into());
        install_on_this_thread(None);
        let collected = collector.take();
        let kinds: Vec<&str> = collected.entries.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["kept root", "snapshot mismatch"]);
        assert_eq!(
            collected.kept_roots,
            [KeptRoot {
                path: "/tmp/live-a__b-1".into(),
                log_tail: "last words".into()
            }]
        );
        assert_eq!(collected.snapshot.unwrap().new, "new");
    }
}
