//! What the observer saw an agent do, whoever drove it: every session, in the structural form of
//! a recorded turn ([`TurnSummary`]), so a product's run snapshots like the harness's own turns.
//!
//! [`SessionLog`] is the pure part: it is fed the agent's events one by one (tests feed it by
//! hand) and summarises them, with the messages the agent answered at record time where it
//! answered them (they survive a lost stream; the events are all there is when it refuses).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use super::from_turn::{TIMING_NOISE, interaction};
use super::{EventTrace, Evidence, MessageSummary, ToolCallSummary, TurnSummary};
use crate::client::{
    Ask, AskOutcome, Event, Interaction, MessageInfo, MessageWithParts, Part, SessionInfo,
    SessionStatus,
};
use crate::redact::Redactor;

/// Every session an agent served while the observer watched it, from
/// [`Agent::observed`](crate::opencode::Agent::observed); recorded with
/// [`Evidence::record_observed`].
///
/// Redacted, with numbered placeholders counted within this record (`[session-1]` is the first
/// session created), so it snapshots the same on every run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Observed {
    /// The sessions, in the order they were created.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<ObservedSession>,
    /// Where the record may be incomplete: each time the observer subscribed again after its
    /// event stream ended (the agent restarted, the stream dropped), events in between may be
    /// missing. Messages, tool calls and the structured output are read from the agent when
    /// the record is made, so they are complete whenever the agent still answers for them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<String>,
}

impl Observed {
    /// The session whose (redacted) id is `id`, e.g. `[session-1]`.
    pub fn session(&self, id: &str) -> Option<&ObservedSession> {
        self.sessions.iter().find(|s| s.id == id)
    }
}

/// One session the agent served: what it did there, as a turn's record reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ObservedSession {
    /// Its id as a numbered placeholder, in creation order: `[session-1]`, `[session-2]`.
    pub id: String,
    /// The session it was made for (a sub-agent's session has one), as a placeholder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What happened in it over the whole scenario: its event trace (timing noise left out, as
    /// in a turn's), every message (the user's too) by role with its part types, tool calls
    /// with their final status, asks with the replies the agent reported, the structured
    /// output, errors by name.
    #[serde(flatten)]
    pub summary: TurnSummary,
}

impl Evidence {
    /// Records what an agent did for whoever drove it (see [`Observed`]) as an `observed`
    /// section.
    pub fn record_observed(&self, observed: &Observed) {
        self.record_section("observed", observed);
    }
}

/// A message as the record needs it.
#[derive(Debug, Clone)]
struct MessageRecord {
    id: String,
    role: String,
    error: Option<String>,
    structured: Option<Value>,
}

impl MessageRecord {
    fn of(info: &MessageInfo) -> Self {
        Self {
            id: info.id.clone(),
            role: info.role.clone(),
            error: info.error.as_ref().map(|e| e.name().to_string()),
            structured: info.structured.clone(),
        }
    }
}

/// A part as the record needs it.
#[derive(Debug, Clone)]
struct PartRecord {
    id: String,
    message_id: String,
    kind: String,
    tool: Option<String>,
    status: Option<String>,
}

impl PartRecord {
    fn of(part: &Part) -> Self {
        Self {
            id: part.id.clone(),
            message_id: part.message_id.clone(),
            kind: part.kind.clone(),
            tool: part.tool.clone(),
            status: part.state.as_ref().map(|s| s.status.to_string()),
        }
    }
}

/// The messages of one session with their parts, each in its last known state, in order of
/// first appearance.
#[derive(Debug, Default)]
struct Messages {
    messages: Vec<MessageRecord>,
    parts: Vec<PartRecord>,
}

impl Messages {
    fn upsert_message(&mut self, info: &MessageInfo) {
        let record = MessageRecord::of(info);
        match self.messages.iter_mut().find(|m| m.id == record.id) {
            Some(m) => *m = record,
            None => self.messages.push(record),
        }
    }

    fn upsert_part(&mut self, part: &Part) {
        let record = PartRecord::of(part);
        match self.parts.iter_mut().find(|p| p.id == record.id) {
            Some(p) => *p = record,
            None => self.parts.push(record),
        }
    }

    fn from_fetched(fetched: &[MessageWithParts]) -> Self {
        let mut out = Self::default();
        for m in fetched {
            out.upsert_message(&m.info);
            for p in &m.parts {
                out.upsert_part(p);
            }
        }
        out
    }

    fn parts_of<'a>(&'a self, message: &'a str) -> impl Iterator<Item = &'a PartRecord> {
        self.parts.iter().filter(move |p| p.message_id == message)
    }
}

/// One session as the events told it.
#[derive(Debug)]
struct SessionRecord {
    id: String,
    parent: Option<String>,
    /// `time.created` (ms since the epoch), once known.
    created: Option<u64>,
    trace: EventTrace,
    messages: Messages,
    interactions: Vec<Interaction>,
    session_errors: Vec<String>,
    status: Option<SessionStatus>,
}

impl SessionRecord {
    fn new(id: &str) -> Self {
        Self {
            id: id.to_string(),
            parent: None,
            created: None,
            trace: EventTrace::new(),
            messages: Messages::default(),
            interactions: Vec::new(),
            session_errors: Vec::new(),
            status: None,
        }
    }

    fn learn(&mut self, info: &SessionInfo) {
        if self.parent.is_none() {
            self.parent = info.parent_id.clone();
        }
        if self.created.is_none() {
            self.created = info
                .extra
                .get("time")
                .and_then(|t| t.get("created"))
                .and_then(Value::as_u64);
        }
    }

    fn settle(&mut self, request_id: &str, outcome: AskOutcome) {
        if let Some(i) = self
            .interactions
            .iter_mut()
            .find(|i| i.ask.id() == request_id)
        {
            i.outcome = Some(outcome);
        }
    }

    fn feed(&mut self, event: &Event) {
        if !TIMING_NOISE.contains(&event.type_name()) {
            self.trace.push(event.type_name());
        }
        match event {
            Event::SessionCreated { info, .. } | Event::SessionUpdated { info, .. } => {
                self.learn(info);
            }
            Event::SessionStatus { status, .. } => self.status = Some(status.clone()),
            Event::SessionIdle { .. } => self.status = Some(SessionStatus::Idle),
            Event::SessionError { error: Some(e), .. } => {
                self.session_errors.push(e.name().to_string());
            }
            Event::MessageUpdated { info, .. } => self.messages.upsert_message(info),
            Event::MessagePartUpdated { part, .. } => self.messages.upsert_part(part),
            Event::PermissionAsked(request) => self.interactions.push(Interaction {
                ask: Ask::Permission(request.clone()),
                answer: None,
                outcome: None,
            }),
            Event::QuestionAsked(request) => self.interactions.push(Interaction {
                ask: Ask::Question(request.clone()),
                answer: None,
                outcome: None,
            }),
            Event::PermissionReplied {
                request_id, reply, ..
            } => self.settle(request_id, AskOutcome::PermissionReplied(reply.clone())),
            Event::QuestionReplied {
                request_id,
                answers,
                ..
            } => self.settle(request_id, AskOutcome::QuestionReplied(answers.clone())),
            Event::QuestionRejected { request_id, .. } => {
                self.settle(request_id, AskOutcome::QuestionRejected);
            }
            Event::Unknown { kind, properties } => {
                let id = |key: &str| properties.get(key).and_then(Value::as_str);
                match kind.as_str() {
                    "message.part.removed" => {
                        if let Some(part) = id("partID") {
                            self.messages.parts.retain(|p| p.id != part);
                        }
                    }
                    "message.removed" => {
                        if let Some(message) = id("messageID") {
                            self.messages.messages.retain(|m| m.id != message);
                            self.messages.parts.retain(|p| p.message_id != message);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The turn-shaped summary, from `fetched` messages when the agent answered for them.
    fn summary(&self, fetched: Option<&[MessageWithParts]>, redactor: &Redactor) -> TurnSummary {
        let from_agent;
        let messages = match fetched {
            Some(fetched) => {
                from_agent = Messages::from_fetched(fetched);
                &from_agent
            }
            None => &self.messages,
        };
        let message_summaries = messages
            .messages
            .iter()
            .map(|m| MessageSummary {
                role: m.role.clone(),
                parts: messages.parts_of(&m.id).map(|p| p.kind.clone()).collect(),
            })
            .collect();
        // In message order: a part is listed with its message.
        let tool_calls = messages
            .messages
            .iter()
            .flat_map(|m| messages.parts_of(&m.id))
            .filter(|p| p.kind == "tool")
            .map(|p| ToolCallSummary {
                tool: p.tool.clone().unwrap_or_default(),
                status: p.status.clone().unwrap_or_else(|| "other".into()),
            })
            .collect();
        let structured_output = messages
            .messages
            .iter()
            .find_map(|m| m.structured.as_ref())
            .map(|v| redactor.redact_json(v));
        let errors = messages
            .messages
            .iter()
            .filter_map(|m| m.error.clone())
            .chain(self.session_errors.iter().cloned())
            .collect();
        let interactions = self
            .interactions
            .iter()
            .map(|i| {
                let mut summary = interaction(i);
                summary.subject = redactor.redact(&summary.subject);
                summary.reply = summary.reply.map(|r| redactor.redact(&r));
                summary
            })
            .collect();
        TurnSummary {
            events: self.trace.clone(),
            messages: message_summaries,
            tool_calls,
            interactions,
            structured_output,
            errors,
            ..TurnSummary::default()
        }
    }
}

/// What the agent answered at record time: its sessions' messages, and the sessions it lists
/// (which tell parents and creation times of sessions the events missed).
#[derive(Debug, Default)]
pub(crate) struct Fetched {
    /// `GET /session/{id}/message` of each session that answered.
    pub(crate) messages: HashMap<String, Vec<MessageWithParts>>,
    /// `GET /session`.
    pub(crate) listed: Vec<SessionInfo>,
}

/// The events of every session, kept in the order sessions were first seen.
#[derive(Debug, Default)]
pub(crate) struct SessionLog {
    sessions: Vec<SessionRecord>,
    index: HashMap<String, usize>,
    gaps: Vec<String>,
}

impl SessionLog {
    fn session(&mut self, id: &str) -> &mut SessionRecord {
        let at = match self.index.get(id) {
            Some(&at) => at,
            None => {
                self.index.insert(id.to_string(), self.sessions.len());
                self.sessions.push(SessionRecord::new(id));
                self.sessions.len() - 1
            }
        };
        &mut self.sessions[at]
    }

    /// Adds one event to its session's record (events of no session are not the record's).
    pub(crate) fn feed(&mut self, event: &Event) {
        if let Some(id) = event.session_id() {
            self.session(id).feed(event);
        }
    }

    /// Whether the record may be incomplete (a note was made).
    pub(crate) fn has_gaps(&self) -> bool {
        !self.gaps.is_empty()
    }

    /// Says where the record may be incomplete (once per distinct note in a row).
    pub(crate) fn note_gap(&mut self, note: impl Into<String>) {
        let note = note.into();
        if self.gaps.last() != Some(&note) {
            self.gaps.push(note);
        }
    }

    /// Forgets every session's status: after a gap the last status seen may be stale (the
    /// idle that ended a turn may be among the events missed).
    pub(crate) fn forget_statuses(&mut self) {
        for session in &mut self.sessions {
            session.status = None;
        }
    }

    /// The ids of the sessions seen so far.
    pub(crate) fn session_ids(&self) -> Vec<String> {
        self.sessions.iter().map(|s| s.id.clone()).collect()
    }

    /// The sessions whose last status seen is not idle (busy, retrying).
    pub(crate) fn unsettled(&self) -> Vec<String> {
        self.sessions
            .iter()
            .filter(|s| {
                matches!(
                    s.status,
                    Some(SessionStatus::Busy | SessionStatus::Retry { .. })
                )
            })
            .map(|s| s.id.clone())
            .collect()
    }

    /// The record: every session seen or listed, in creation order (first seen where the
    /// creation time is unknown), with `fetched` messages where the agent gave them, redacted
    /// by `redactor` with numbering counted from this record (`[session-1]` is the first).
    pub(crate) fn observed(&self, fetched: &Fetched, redactor: &Redactor) -> Observed {
        let numbered = redactor.with_fresh_numbering();
        let mut listed_only: Vec<SessionRecord> = Vec::new();
        let mut learned: HashMap<&str, &SessionInfo> = HashMap::new();
        for info in &fetched.listed {
            if self.index.contains_key(&info.id) {
                learned.insert(&info.id, info);
            } else if !listed_only.iter().any(|s| s.id == info.id) {
                let mut record = SessionRecord::new(&info.id);
                record.learn(info);
                listed_only.push(record);
            }
        }
        let mut all: Vec<(Option<u64>, usize, &SessionRecord, Option<String>)> = self
            .sessions
            .iter()
            .chain(&listed_only)
            .enumerate()
            .map(|(seen, s)| {
                let info = learned.get(s.id.as_str());
                let created = s.created.or_else(|| {
                    info.and_then(|i| i.extra.get("time"))
                        .and_then(|t| t.get("created"))
                        .and_then(Value::as_u64)
                });
                let parent = s
                    .parent
                    .clone()
                    .or_else(|| info.and_then(|i| i.parent_id.clone()));
                (created, seen, s, parent)
            })
            .collect();
        all.sort_by_key(|(created, seen, _, _)| (created.unwrap_or(u64::MAX), *seen));
        // Ids first, in creation order, so `[session-N]` counts sessions as they were created.
        let ids: Vec<String> = all
            .iter()
            .map(|(_, _, s, _)| numbered.redact(&s.id))
            .collect();
        let sessions = all
            .iter()
            .zip(ids)
            .map(|((_, _, s, parent), id)| ObservedSession {
                id,
                parent: parent.as_deref().map(|p| numbered.redact(p)),
                summary: s.summary(fetched.messages.get(&s.id).map(Vec::as_slice), &numbered),
            })
            .collect();
        Observed {
            sessions,
            gaps: self.gaps.iter().map(|g| numbered.redact(g)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(kind: &str, properties: Value) -> Event {
        let frame = json!({"id": "evt_1", "type": kind, "properties": properties}).to_string();
        Event::parse(&frame, &Redactor::default()).unwrap()
    }

    fn session_created(id: &str, created: u64, parent: Option<&str>) -> Event {
        let mut info = json!({"id": id, "title": "t", "time": {"created": created}});
        if let Some(p) = parent {
            info["parentID"] = json!(p);
        }
        event("session.created", json!({"sessionID": id, "info": info}))
    }

    fn message(session: &str, id: &str, role: &str, extra: Value) -> Event {
        let mut info =
            json!({"id": id, "sessionID": session, "role": role, "time": {"created": 1}});
        info.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event(
            "message.updated",
            json!({"sessionID": session, "info": info}),
        )
    }

    fn part(session: &str, message: &str, id: &str, kind: &str, extra: Value) -> Event {
        let mut part = json!({"id": id, "sessionID": session, "messageID": message, "type": kind});
        part.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        event(
            "message.part.updated",
            json!({"sessionID": session, "part": part}),
        )
    }

    fn status(session: &str, kind: &str) -> Event {
        event(
            "session.status",
            json!({"sessionID": session, "status": {"type": kind}}),
        )
    }

    const A: &str = "ses_dd712ea10ffe0CmPyaB6dhvd7G";
    const B: &str = "ses_dd712ea10ffe1CmPyaB6dhvd7H";

    /// A turn with a permission-gated tool, told by events alone.
    fn permission_turn(log: &mut SessionLog, s: &str) {
        log.feed(&status(s, "busy"));
        log.feed(&message(s, "msg_u1", "user", json!({})));
        log.feed(&part(s, "msg_u1", "prt_u1", "text", json!({"text": "hi"})));
        log.feed(&message(s, "msg_a1", "assistant", json!({})));
        log.feed(&part(s, "msg_a1", "prt_a1", "step-start", json!({})));
        let tool = |status: &str| {
            part(
                s,
                "msg_a1",
                "prt_a2",
                "tool",
                json!({"tool": "bash", "callID": "call_1", "state": {"status": status, "input": {}}}),
            )
        };
        log.feed(&tool("running"));
        log.feed(&event(
            "permission.asked",
            json!({"id": "per_1", "sessionID": s, "permission": "bash", "patterns": ["ls"]}),
        ));
        log.feed(&event(
            "permission.replied",
            json!({"sessionID": s, "requestID": "per_1", "reply": "once"}),
        ));
        log.feed(&tool("completed"));
        log.feed(&event(
            "message.part.delta",
            json!({"sessionID": s, "messageID": "msg_a1", "partID": "prt_a3", "field": "text", "delta": "x"}),
        ));
        log.feed(&status(s, "idle"));
        log.feed(&event("session.idle", json!({"sessionID": s})));
    }

    #[test]
    fn events_alone_make_a_turn_shaped_record_per_session() {
        let mut log = SessionLog::default();
        log.feed(&event("server.heartbeat", json!({})));
        log.feed(&session_created(A, 1_795_982_956_015, None));
        permission_turn(&mut log, A);
        assert_eq!(log.unsettled(), Vec::<String>::new());
        let observed = log.observed(&Fetched::default(), &Redactor::default());
        assert_eq!(
            serde_json::to_value(&observed).unwrap(),
            json!({"sessions": [{
                "id": "[session-1]",
                "events": ["session.created", "session.status", "permission.asked",
                           "permission.replied", "session.status"],
                "messages": [
                    {"role": "user", "parts": ["text"]},
                    {"role": "assistant", "parts": ["step-start", "tool"]},
                ],
                "tool_calls": [{"tool": "bash", "status": "completed"}],
                "interactions": [{"kind": "permission", "subject": "bash", "reply": "once"}],
            }]})
        );
    }

    #[test]
    fn sessions_are_in_creation_order_and_numbered_within_the_record() {
        let redactor = Redactor::default();
        // The scenario's redactor met B first: the record still numbers by creation.
        assert_eq!(redactor.redact(B), "[session-1]");
        let mut log = SessionLog::default();
        // B (A's child) is seen first, but A was created first.
        log.feed(&status(B, "busy"));
        log.feed(&session_created(A, 1_795_982_956_015, None));
        log.feed(&session_created(B, 1_795_982_956_020, Some(A)));
        log.feed(&status(B, "busy"));
        assert_eq!(log.unsettled(), [B.to_string()]);
        let observed = log.observed(&Fetched::default(), &redactor);
        let ids: Vec<(&str, Option<&str>)> = observed
            .sessions
            .iter()
            .map(|s| (s.id.as_str(), s.parent.as_deref()))
            .collect();
        assert_eq!(
            ids,
            [("[session-1]", None), ("[session-2]", Some("[session-1]"))]
        );
        assert!(observed.session("[session-2]").is_some());
    }

    #[test]
    fn fetched_messages_replace_what_the_events_missed() {
        let mut log = SessionLog::default();
        log.feed(&session_created(A, 1_795_982_956_015, None));
        log.feed(&status(A, "busy"));
        log.note_gap("the stream ended");
        log.note_gap("the stream ended");
        let fetched: Vec<MessageWithParts> = serde_json::from_value(json!([
            {"info": {"id": "msg_u1", "sessionID": A, "role": "user"},
             "parts": [{"id": "prt_1", "messageID": "msg_u1", "type": "text", "text": "go"}]},
            {"info": {"id": "msg_a1", "sessionID": A, "role": "assistant",
                      "structured": {"decision": "advance", "at": "/tmp/x ses_dd712ea10ffe0CmPyaB6dhvd7G"},
                      "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}},
             "parts": [{"id": "prt_2", "messageID": "msg_a1", "type": "tool", "tool": "write",
                        "state": {"status": "error", "input": {}, "error": "no"}}]},
        ]))
        .unwrap();
        // A session only the agent's list knows, created before A.
        let listed: Vec<SessionInfo> = serde_json::from_value(json!([
            {"id": B, "time": {"created": 1_795_982_956_000u64}},
            {"id": A, "time": {"created": 1_795_982_956_015u64}},
        ]))
        .unwrap();
        let fetched = Fetched {
            messages: HashMap::from([(A.to_string(), fetched)]),
            listed,
        };
        let observed = log.observed(&fetched, &Redactor::default());
        assert_eq!(
            serde_json::to_value(&observed).unwrap(),
            json!({
                "sessions": [
                    {"id": "[session-1]"},
                    {"id": "[session-2]",
                     "events": ["session.created", "session.status"],
                     "messages": [
                        {"role": "user", "parts": ["text"]},
                        {"role": "assistant", "parts": ["tool"]},
                     ],
                     "tool_calls": [{"tool": "write", "status": "error"}],
                     "structured_output": {"decision": "advance", "at": "/tmp/x [session-2]"},
                     "errors": ["MessageAbortedError"]},
                ],
                "gaps": ["the stream ended"],
            })
        );
    }

    #[test]
    fn removed_parts_and_question_outcomes_follow_the_events() {
        let mut log = SessionLog::default();
        log.feed(&message(A, "msg_a1", "assistant", json!({})));
        log.feed(&part(A, "msg_a1", "prt_1", "reasoning", json!({})));
        log.feed(&part(A, "msg_a1", "prt_2", "text", json!({})));
        log.feed(&event(
            "message.part.removed",
            json!({"sessionID": A, "messageID": "msg_a1", "partID": "prt_1"}),
        ));
        log.feed(&event(
            "question.asked",
            json!({"id": "que_1", "sessionID": A,
                   "questions": [{"question": "Pick one?", "header": "Pick", "options": []}]}),
        ));
        log.feed(&event(
            "question.replied",
            json!({"sessionID": A, "requestID": "que_1", "answers": [["A"]]}),
        ));
        log.feed(&event(
            "question.asked",
            json!({"id": "que_2", "sessionID": A, "questions": [{"question": "Again?"}]}),
        ));
        let observed = log.observed(&Fetched::default(), &Redactor::default());
        let summary = &observed.sessions[0].summary;
        assert_eq!(summary.messages[0].parts, ["text"]);
        assert_eq!(
            serde_json::to_value(&summary.interactions).unwrap(),
            json!([
                {"kind": "question", "subject": "Pick", "reply": "answered [[\"A\"]]"},
                {"kind": "question", "subject": "Again?"},
            ])
        );
    }
}
