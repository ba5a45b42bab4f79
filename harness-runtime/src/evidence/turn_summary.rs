//! The evidence section of one turn: what the agent did, in a shape that reads well in a
//! snapshot and does not churn with timing (repeated events are counted, not listed).
//!
//! The client builds a [`TurnSummary`] from its `Turn` and records it with
//! [`Evidence::record_turn_summary`](super::Evidence::record_turn_summary).

use serde::{Serialize, Serializer};

/// A turn, summarised. Empty parts are left out of the snapshot.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TurnSummary {
    /// Event types in arrival order, consecutive repeats collapsed: `message.part.delta ×12`.
    #[serde(skip_serializing_if = "EventTrace::is_empty")]
    pub events: EventTrace,
    /// The turn's messages, in order, with the types of their parts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<MessageSummary>,
    /// Tool calls with their final status.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSummary>,
    /// Permissions asked and questions put, with the replies given.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub interactions: Vec<InteractionSummary>,
    /// The agent's last plan, one `status: step` line per entry (ACP agents' `plan` updates).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<String>,
    /// The structured output, when the turn asked for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured_output: Option<serde_json::Value>,
    /// Typed errors by name (`MessageAbortedError`, `ProviderAuthError`), never their messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// How the turn stopped, as an ACP agent says (`end_turn`, `cancelled`, `refusal`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// Event types with consecutive repeats collapsed and counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EventTrace {
    runs: Vec<(String, usize)>,
}

impl EventTrace {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// A trace of the given event types, in order.
    pub fn from_types<I: IntoIterator<Item = S>, S: AsRef<str>>(types: I) -> Self {
        let mut trace = Self::new();
        for t in types {
            trace.push(t.as_ref());
        }
        trace
    }

    /// Appends one event type; a repeat of the last one increments its count.
    pub fn push(&mut self, event_type: &str) {
        match self.runs.last_mut() {
            Some((last, count)) if last == event_type => *count += 1,
            _ => self.runs.push((event_type.to_owned(), 1)),
        }
    }

    /// Whether no event was pushed.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The runs: each event type with how many times it came in a row.
    pub fn runs(&self) -> &[(String, usize)] {
        &self.runs
    }

    /// The trace as snapshot lines: `session.idle`, `message.part.delta ×12`.
    pub fn lines(&self) -> Vec<String> {
        self.runs
            .iter()
            .map(|(t, n)| {
                if *n == 1 {
                    t.clone()
                } else {
                    format!("{t} ×{n}")
                }
            })
            .collect()
    }
}

impl Serialize for EventTrace {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.lines().serialize(serializer)
    }
}

/// One message of a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct MessageSummary {
    /// `user` or `assistant`.
    pub role: String,
    /// The types of its parts in order: `step-start`, `text`, `tool`, `step-finish`.
    pub parts: Vec<String>,
}

/// One tool call of a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ToolCallSummary {
    /// The tool's name: `bash`, `write`.
    pub tool: String,
    /// The final state: `completed`, `error`, `running` (when the turn ended first).
    pub status: String,
}

/// A permission asked or a question put during a turn.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct InteractionSummary {
    /// `permission` or `question`.
    pub kind: String,
    /// What was asked: the permission's type (`bash`), or the question's header.
    pub subject: String,
    /// The reply given (`once`, `always`, `reject`, an answer), or none when left pending.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
}

impl MessageSummary {
    /// A message of `role` whose parts have the types `parts`.
    pub fn new(role: impl Into<String>, parts: Vec<String>) -> Self {
        Self {
            role: role.into(),
            parts,
        }
    }
}

impl ToolCallSummary {
    /// A call of `tool` that ended `status`.
    pub fn new(tool: impl Into<String>, status: impl Into<String>) -> Self {
        Self {
            tool: tool.into(),
            status: status.into(),
        }
    }
}

impl InteractionSummary {
    /// A `kind` ask about `subject`, answered `reply`.
    pub fn new(kind: impl Into<String>, subject: impl Into<String>, reply: Option<String>) -> Self {
        Self {
            kind: kind.into(),
            subject: subject.into(),
            reply,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_repeats_collapse() {
        let trace = EventTrace::from_types([
            "session.status",
            "message.part.delta",
            "message.part.delta",
            "message.part.delta",
            "message.updated",
            "message.part.delta",
        ]);
        assert_eq!(
            trace.lines(),
            [
                "session.status",
                "message.part.delta ×3",
                "message.updated",
                "message.part.delta"
            ]
        );
    }

    #[test]
    fn empty_parts_are_left_out() {
        let summary = TurnSummary {
            errors: vec!["MessageAbortedError".into()],
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&summary).unwrap(),
            serde_json::json!({"errors": ["MessageAbortedError"]})
        );
    }
}
