//! A collected [`Turn`](crate::client::Turn) as evidence: structural facts only, so snapshots
//! are stable across runs and across models.

use crate::client::{Ask, AskAnswer, AskOutcome, Turn};

use super::{
    EventTrace, Evidence, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary,
};

/// Event types whose number and position depend on timing, not on what the agent did:
/// heartbeats, bookkeeping updates, diffs, and the second `session.idle` OpenCode often sends.
pub(super) const TIMING_NOISE: &[&str] = &[
    "server.heartbeat",
    "server.connected",
    "session.updated",
    "session.diff",
    "session.idle",
    "message.part.delta",
    "message.part.updated",
    "message.updated",
];

impl TurnSummary {
    /// Summarises `turn`: the stable part of its event trace, messages by role with part
    /// types, tool calls with status, asks with replies, structured output, error names.
    ///
    /// Part and message updates are left out of the trace because their count depends on how
    /// the stream was chunked; the text delta count is recorded on its own by
    /// [`Evidence::record_turn`] when the scenario asks for it.
    pub fn from_turn(turn: &Turn) -> Self {
        let events = EventTrace::from_types(
            turn.trace
                .iter()
                .filter(|t| !TIMING_NOISE.contains(&t.as_str())),
        );
        let messages = turn
            .messages
            .iter()
            .map(|m| MessageSummary {
                role: m.info.role.clone(),
                parts: m.parts.iter().map(|p| p.kind.clone()).collect(),
            })
            .collect();
        let tool_calls = turn
            .tool_calls
            .iter()
            .map(|c| ToolCallSummary {
                tool: c.tool.clone(),
                status: c.status.to_string(),
            })
            .collect();
        let interactions = turn.interactions.iter().map(interaction).collect();
        let errors = turn
            .errors
            .iter()
            .chain(&turn.session_errors)
            .map(|e| e.name().to_string())
            .collect();
        TurnSummary {
            events,
            messages,
            tool_calls,
            interactions,
            structured_output: turn.structured.clone(),
            errors,
            ..TurnSummary::default()
        }
    }
}

pub(super) fn interaction(i: &crate::client::Interaction) -> InteractionSummary {
    let (kind, subject) = match &i.ask {
        Ask::Permission(p) => ("permission", p.permission.clone()),
        Ask::Question(q) => (
            "question",
            q.questions
                .first()
                .map(|q| {
                    if q.header.is_empty() {
                        q.question.clone()
                    } else {
                        q.header.clone()
                    }
                })
                .unwrap_or_default(),
        ),
    };
    let reply = match (&i.answer, &i.outcome) {
        (_, Some(AskOutcome::PermissionReplied(r))) => Some(r.clone()),
        (_, Some(AskOutcome::QuestionReplied(a))) => Some(format!("answered {a:?}")),
        (_, Some(AskOutcome::QuestionRejected)) => Some("rejected".into()),
        (Some(AskAnswer::Permission(r)), None) => Some(r.as_str().to_string()),
        (Some(AskAnswer::Answers(a)), None) => Some(format!("answered {a:?}")),
        (Some(AskAnswer::RejectQuestion), None) => Some("rejected".into()),
        (Some(AskAnswer::LeavePending), None) | (None, None) => None,
    };
    InteractionSummary {
        kind: kind.into(),
        subject,
        reply,
    }
}

impl Evidence {
    /// Records `turn` as a `turn` section (see [`TurnSummary::from_turn`]).
    pub fn record_turn(&self, turn: &Turn) {
        self.record_turn_summary(&TurnSummary::from_turn(turn));
    }
}
