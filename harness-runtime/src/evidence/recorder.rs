//! The ordered recorder behind `live.evidence()`.

use std::sync::{Arc, Mutex};

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::TurnSummary;
use super::fact::Fact;
use super::fact_capture::capture_or_note;
use crate::redact::Redactor;

/// The names of the counters other parts feed, so a snapshot spells each one the same way.
pub mod counters {
    /// A prompt was posted (client).
    pub const PROMPTS: &str = "prompts";
    /// A permission was replied to (client).
    pub const PERMISSION_REPLIES: &str = "permission_replies";
    /// A question was replied to (client).
    pub const QUESTION_REPLIES: &str = "question_replies";
    /// A session was aborted (client).
    pub const ABORTS: &str = "aborts";
    /// An agent process exited (provisioning).
    pub const PROCESS_EXITS: &str = "process_exits";
    /// A request reached the scripted model (model).
    pub const MODEL_REQUESTS: &str = "model_requests";
}

/// Structured facts recorded in order, redacted on the way in, plus named counters.
///
/// It serializes (and is snapshotted) as a YAML sequence of one-key maps in recording order, so
/// a key may repeat (`turn` once per turn), followed by `counters` when any was incremented:
///
/// ```yaml
/// - prompt: say hello
/// - turn:
///     events:
///       - message.part.delta ×12
/// - counters:
///     prompts: 1
/// ```
#[derive(Debug)]
pub struct Evidence {
    redactor: Arc<Redactor>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: Vec<(String, Fact)>,
    /// In order of first increment.
    counters: Vec<(String, u64)>,
}

impl Evidence {
    pub(crate) fn new(redactor: Arc<Redactor>) -> Self {
        Self {
            redactor,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while recording leaves consistent data (pushes are atomic): keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a free-form fact under `key` (redacted: ids, paths, secrets, timestamps…).
    pub fn record(&self, key: &str, value: impl Serialize) {
        self.record_section(key, &value);
    }

    /// Records a structured section (a model request, a turn summary, a status) under `key`,
    /// keeping the order of its fields.
    pub fn record_section(&self, key: &str, value: &impl Serialize) {
        let fact = capture_or_note(value).redacted(&self.redactor);
        let key = self.redactor.redact(key);
        self.state().entries.push((key, fact));
    }

    /// Records a turn as a `turn` section.
    pub fn record_turn_summary(&self, summary: &TurnSummary) {
        self.record_section("turn", summary);
    }

    /// Increments the counter `name` (prompts, replies, aborts, process exits…).
    pub fn count(&self, name: &str) {
        self.count_by(name, 1);
    }

    /// Adds `n` to the counter `name`.
    pub fn count_by(&self, name: &str, n: u64) {
        let mut state = self.state();
        match state.counters.iter_mut().find(|(k, _)| k == name) {
            Some((_, value)) => *value += n,
            None => state.counters.push((name.to_owned(), n)),
        }
    }

    /// The current value of the counter `name` (0 when never incremented).
    pub fn counter(&self, name: &str) -> u64 {
        self.state()
            .counters
            .iter()
            .find(|(k, _)| k == name)
            .map_or(0, |(_, v)| *v)
    }

    /// The last value recorded under `key`, redacted, as JSON.
    pub fn get(&self, key: &str) -> Option<serde_json::Value> {
        self.state()
            .entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.to_json())
    }

    /// Every recorded entry in order, redacted, as JSON (counters not included).
    pub fn entries(&self) -> Vec<(String, serde_json::Value)> {
        self.state()
            .entries
            .iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect()
    }

    /// Whether nothing was recorded or counted.
    pub fn is_empty(&self) -> bool {
        let state = self.state();
        state.entries.is_empty() && state.counters.is_empty()
    }
}

impl Serialize for Evidence {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let state = self.state();
        let extra = usize::from(!state.counters.is_empty());
        let mut seq = serializer.serialize_seq(Some(state.entries.len() + extra))?;
        for (key, value) in &state.entries {
            seq.serialize_element(&OneEntry(key, value))?;
        }
        if !state.counters.is_empty() {
            let counters = Fact::Map(
                state
                    .counters
                    .iter()
                    .map(|(k, v)| (k.clone(), Fact::UInt(*v)))
                    .collect(),
            );
            seq.serialize_element(&OneEntry("counters", &counters))?;
        }
        seq.end()
    }
}

struct OneEntry<'a>(&'a str, &'a Fact);

impl Serialize for OneEntry<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(self.0, self.1)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::EventTrace;

    fn evidence() -> Evidence {
        Evidence::new(Arc::new(Redactor::default()))
    }

    #[test]
    fn entries_keep_order_and_repeat() {
        let ev = evidence();
        ev.record("b", 1);
        ev.record("a", "x");
        ev.record("b", 2);
        ev.count("prompts");
        ev.count("aborts");
        ev.count("prompts");
        let json = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"b": 1}, {"a": "x"}, {"b": 2},
                {"counters": {"prompts": 2, "aborts": 1}}
            ])
        );
        assert_eq!(ev.get("b"), Some(serde_json::json!(2)));
        assert_eq!(ev.counter("prompts"), 2);
        assert_eq!(ev.counter("never"), 0);
    }

    #[test]
    fn values_are_redacted_on_the_way_in() {
        let redactor = Arc::new(Redactor::default());
        redactor.add_secret("hunter2-secret");
        let ev = Evidence::new(redactor);
        ev.record(
            "session",
            serde_json::json!({
                "id": "ses_dd712ea10ffe0CmPyaB6dhvd7G",
                "note": "key hunter2-secret",
                "tokens": {"input": 3},
                "time": {"created": 1795982956015u64}
            }),
        );
        assert_eq!(
            ev.get("session"),
            Some(serde_json::json!({
                "id": "[session-1]",
                "note": "key [secret]",
                "tokens": "[tokens]",
                "time": {"created": "[timestamp]"}
            }))
        );
    }

    #[test]
    fn a_turn_summary_is_a_section() {
        let ev = evidence();
        ev.record_turn_summary(&TurnSummary {
            events: EventTrace::from_types(["a", "a"]),
            ..Default::default()
        });
        assert_eq!(
            ev.entries(),
            [("turn".to_owned(), serde_json::json!({"events": ["a ×2"]}))]
        );
    }
}
