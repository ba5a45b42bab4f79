//! What a client remembers about the sessions it talks to, shared by its clones and sessions.
//!
//! OpenCode answers some questions badly or slowly: the message list of a session that got a
//! structured prompt is a 400, and on its one thread a `GET` delays a post. The client notes
//! what it did to each session, so a turn knows its baseline without asking when it can.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

/// Per-session facts, keyed by session id.
#[derive(Debug, Default)]
pub(crate) struct SessionMemory {
    inner: Mutex<Facts>,
}

#[derive(Debug, Default)]
struct Facts {
    /// Sessions in which a prompt carried `format`: their message list answers 400.
    structured: HashSet<String>,
    /// Message ids collected by earlier turns: the baseline when the list is unavailable.
    known_messages: HashMap<String, HashSet<String>>,
    /// Sessions this client created and has changed nothing in since: they have no messages,
    /// so a turn there needs no baseline request.
    fresh: HashSet<String>,
}

impl SessionMemory {
    fn facts(&self) -> std::sync::MutexGuard<'_, Facts> {
        // The facts are plain sets: a panic while one was held leaves them usable.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// This client created `session`: it has no messages yet.
    pub(crate) fn created(&self, session: &str) {
        self.facts().fresh.insert(session.to_string());
    }

    /// A request that may change `session` (a prompt, an abort, a reply, a delete) was sent.
    pub(crate) fn changed(&self, session: &str) {
        self.facts().fresh.remove(session);
    }

    /// A prompt was sent to `session`; `structured` when it carried a `format`.
    pub(crate) fn prompted(&self, session: &str, structured: bool) {
        let mut facts = self.facts();
        facts.fresh.remove(session);
        if structured {
            facts.structured.insert(session.to_string());
        }
    }

    /// Whether this client created `session` and has changed nothing in it since.
    pub(crate) fn is_fresh(&self, session: &str) -> bool {
        self.facts().fresh.contains(session)
    }

    /// Whether a structured prompt was sent to `session` (its message list answers 400).
    pub(crate) fn structured_sent(&self, session: &str) -> bool {
        self.facts().structured.contains(session)
    }

    /// Adds message ids a turn of `session` collected.
    pub(crate) fn remember_messages(&self, session: &str, ids: Vec<String>) {
        self.facts()
            .known_messages
            .entry(session.to_string())
            .or_default()
            .extend(ids);
    }

    /// Every message id earlier turns of `session` collected.
    pub(crate) fn known_messages(&self, session: &str) -> HashSet<String> {
        self.facts()
            .known_messages
            .get(session)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_created_session_is_fresh_until_changed_or_prompted() {
        let memory = SessionMemory::default();
        assert!(!memory.is_fresh("a"));
        memory.created("a");
        memory.created("b");
        assert!(memory.is_fresh("a"));
        memory.changed("a");
        assert!(!memory.is_fresh("a"));
        memory.prompted("b", false);
        assert!(!memory.is_fresh("b"));
        assert!(!memory.structured_sent("b"));
        memory.prompted("b", true);
        assert!(memory.structured_sent("b"));
    }
}
