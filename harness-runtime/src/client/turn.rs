//! Turn assembly: a pure state machine fed with [`Event`]s, and the [`Turn`] it produces.
//!
//! A turn is the set of messages of one session that did not exist before the prompt (the
//! baseline). It starts with the first new message or a busy/retry status of the session; it is
//! done once the session was seen idle (`session.status` idle or `session.idle`) after the start
//! AND every new assistant message is completed. The second condition handles the observed
//! double `session.idle`: after an abort the first idle precedes the assistant message's
//! completion, so stopping at the first idle would lose the final error and parts.
//!
//! Limits, stated plainly: events of other sessions (sub-agent sessions too) are ignored, so an
//! ask raised in a child session is not seen here; a previous turn's trailing events that
//! arrive after this turn started are filtered only by message id (the baseline).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::error::ClientError;
use super::events::Event;
use super::message_error::MessageError;
use super::policy::{Ask, AskAnswer};
use super::types::{MessageInfo, MessageWithParts, Part, SessionStatus, ToolStatus};
use crate::redact::Redactor;

/// What feeding one event did.
#[derive(Clone, Debug, PartialEq)]
pub enum Feed {
    /// Not part of this turn (another session, a heartbeat, a baseline message, noise).
    Ignored,
    /// Recorded.
    Recorded,
    /// The agent asks something: answer it (or not) and call [`TurnCollector::record_answer`].
    Ask(Box<Ask>),
    /// The turn is complete.
    Done,
}

/// How the server said an ask was settled.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AskOutcome {
    /// `permission.replied` with this reply.
    PermissionReplied(String),
    /// `question.replied` with these answers.
    QuestionReplied(Vec<Vec<String>>),
    /// `question.rejected`.
    QuestionRejected,
}

/// One ask of the turn: what was asked, what this client answered, what the server reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Interaction {
    /// The request.
    pub ask: Ask,
    /// What this client answered (`None`: not decided by this client).
    pub answer: Option<AskAnswer>,
    /// The server's settlement event, if seen during the turn.
    pub outcome: Option<AskOutcome>,
}

/// One tool call of the turn, in its last known state.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool (`bash`, `question`, `StructuredOutput`, …).
    pub tool: String,
    /// The call id.
    pub call_id: String,
    /// The assistant message holding it.
    pub message_id: String,
    /// The status.
    pub status: ToolStatus,
    /// The input.
    pub input: Value,
    /// The output, when completed.
    pub output: Option<String>,
    /// The error, when failed (a rejected permission included).
    pub error: Option<String>,
}

/// One assistant message of the turn with its parts.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TurnMessage {
    /// The message info in its last known state.
    pub info: MessageInfo,
    /// Its parts, in order of first appearance, each in its last known state.
    pub parts: Vec<Part>,
}

/// A collected turn.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct Turn {
    /// The session.
    pub session_id: String,
    /// The prompt's user message.
    pub user_message_id: Option<String>,
    /// The assistant messages (one per model step), in order.
    pub messages: Vec<TurnMessage>,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The text of the assistant's text parts, joined by newlines.
    pub text: String,
    /// How many `message.part.delta` events extended a text field.
    pub text_delta_count: usize,
    /// `info.structured` of a `json_schema` prompt.
    pub structured: Option<Value>,
    /// Errors of the assistant messages, in order.
    pub errors: Vec<MessageError>,
    /// `session.error` events of the turn.
    pub session_errors: Vec<MessageError>,
    /// Permission and question interactions.
    pub interactions: Vec<Interaction>,
    /// The ordered event types of the turn (this session only, heartbeats excluded).
    pub trace: Vec<String>,
    #[serde(skip)]
    pub(crate) redactor: Option<Arc<Redactor>>,
}

impl Turn {
    /// The turn's error: the first assistant message error, else the first `session.error`.
    pub fn error(&self) -> Option<&MessageError> {
        self.errors.first().or(self.session_errors.first())
    }

    /// The structured output, or a typed error saying why there is none.
    pub fn structured_or_err(&self) -> Result<&Value, ClientError> {
        if let Some(v) = &self.structured {
            return Ok(v);
        }
        let redact = |s: &str| match &self.redactor {
            Some(r) => r.redact(s),
            None => s.to_string(),
        };
        for e in self.errors.iter().chain(&self.session_errors) {
            if let MessageError::StructuredOutputError { message, retries } = e {
                return Err(ClientError::StructuredOutput {
                    message: redact(message),
                    retries: *retries,
                });
            }
        }
        Err(ClientError::NoStructuredOutput)
    }

    /// Every assistant part of `kind` (`text`, `tool`, `step-finish`, …), in order.
    pub fn parts_of(&self, kind: &str) -> Vec<&Part> {
        self.messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| p.kind == kind)
            .collect()
    }

    /// The first call of `tool`.
    pub fn tool_call(&self, tool: &str) -> Option<&ToolCall> {
        self.tool_calls.iter().find(|c| c.tool == tool)
    }

    /// A turn from finished messages (the blocking prompt's answer): no events, so no trace,
    /// no delta count and no interactions.
    pub fn from_messages(session_id: &str, messages: Vec<MessageWithParts>) -> Self {
        let mut c = TurnCollector::new(session_id, []);
        for m in messages {
            if !m.info.is_assistant() {
                c.user_message_id.get_or_insert(m.info.id.clone());
                continue;
            }
            c.upsert_message(m.info);
            for p in m.parts {
                c.upsert_part(p);
            }
        }
        c.finish()
    }
}

/// Assembles one turn from events; knows nothing about HTTP, so recordings can drive it.
#[derive(Debug)]
pub struct TurnCollector {
    session_id: String,
    baseline: HashSet<String>,
    started: bool,
    busy_seen: bool,
    idle_seen: bool,
    done: bool,
    user_message_id: Option<String>,
    messages: Vec<MessageInfo>,
    parts: Vec<Part>,
    part_index: HashMap<String, usize>,
    text_delta_count: usize,
    session_errors: Vec<MessageError>,
    interactions: Vec<Interaction>,
    trace: Vec<String>,
    last_status: Option<SessionStatus>,
}

impl TurnCollector {
    /// A collector for `session_id`, ignoring the messages whose ids are in `baseline`.
    pub fn new(session_id: &str, baseline: impl IntoIterator<Item = String>) -> Self {
        Self {
            session_id: session_id.to_string(),
            baseline: baseline.into_iter().collect(),
            started: false,
            busy_seen: false,
            idle_seen: false,
            done: false,
            user_message_id: None,
            messages: Vec::new(),
            parts: Vec::new(),
            part_index: HashMap::new(),
            text_delta_count: 0,
            session_errors: Vec::new(),
            interactions: Vec::new(),
            trace: Vec::new(),
            last_status: None,
        }
    }

    /// Whether the turn is complete.
    #[cfg(any(test, feature = "testing"))]
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Feeds one event.
    pub fn feed(&mut self, event: &Event) -> Feed {
        if self.done || event.session_id() != Some(self.session_id.as_str()) {
            return Feed::Ignored;
        }
        let result = match event {
            Event::SessionStatus { status, .. } => {
                self.last_status = Some(status.clone());
                match status {
                    SessionStatus::Busy | SessionStatus::Retry { .. } => {
                        self.started = true;
                        self.busy_seen = true;
                    }
                    SessionStatus::Idle => self.idle_seen |= self.may_idle(),
                }
                Feed::Recorded
            }
            Event::SessionIdle { .. } => {
                self.idle_seen |= self.may_idle();
                Feed::Recorded
            }
            Event::SessionError { error, .. } => {
                if let Some(e) = error {
                    self.session_errors.push(e.clone());
                }
                Feed::Recorded
            }
            Event::MessageUpdated { info, .. } => {
                if self.baseline.contains(&info.id) {
                    return Feed::Ignored;
                }
                self.started = true;
                if info.is_assistant() {
                    self.upsert_message(info.clone());
                } else {
                    self.user_message_id.get_or_insert(info.id.clone());
                }
                Feed::Recorded
            }
            Event::MessagePartUpdated { part, .. } => {
                if self.baseline.contains(&part.message_id) {
                    return Feed::Ignored;
                }
                self.upsert_part(part.clone());
                Feed::Recorded
            }
            Event::MessagePartDelta {
                message_id,
                part_id,
                field,
                delta,
                ..
            } => {
                if self.baseline.contains(message_id) {
                    return Feed::Ignored;
                }
                if field == "text" {
                    self.text_delta_count += 1;
                    if let Some(&i) = self.part_index.get(part_id) {
                        let text = self.parts[i].text.get_or_insert_with(String::new);
                        text.push_str(delta);
                    }
                }
                Feed::Recorded
            }
            Event::PermissionAsked(req) => {
                let ask = Ask::Permission(req.clone());
                self.interactions.push(Interaction {
                    ask: ask.clone(),
                    answer: None,
                    outcome: None,
                });
                Feed::Ask(Box::new(ask))
            }
            Event::QuestionAsked(req) => {
                let ask = Ask::Question(req.clone());
                self.interactions.push(Interaction {
                    ask: ask.clone(),
                    answer: None,
                    outcome: None,
                });
                Feed::Ask(Box::new(ask))
            }
            Event::PermissionReplied {
                request_id, reply, ..
            } => {
                self.settle(request_id, AskOutcome::PermissionReplied(reply.clone()));
                Feed::Recorded
            }
            Event::QuestionReplied {
                request_id,
                answers,
                ..
            } => {
                self.settle(request_id, AskOutcome::QuestionReplied(answers.clone()));
                Feed::Recorded
            }
            Event::QuestionRejected { request_id, .. } => {
                self.settle(request_id, AskOutcome::QuestionRejected);
                Feed::Recorded
            }
            _ => Feed::Recorded,
        };
        // Events before the start belong to the previous turn (e.g. its second idle).
        if !self.started {
            return Feed::Ignored;
        }
        self.trace.push(event.type_name().to_string());
        note_event(event);
        if self.idle_seen && self.incomplete().is_empty() && !matches!(result, Feed::Ask(_)) {
            self.done = true;
            return Feed::Done;
        }
        result
    }

    /// Whether an ask of this turn is neither settled nor answered by this client (left pending
    /// by the policy, or not decided yet).
    pub fn has_unanswered_ask(&self) -> bool {
        self.interactions.iter().any(|i| {
            i.outcome.is_none() && matches!(i.answer, None | Some(AskAnswer::LeavePending))
        })
    }

    /// Records how this client answered the ask `id`.
    pub fn record_answer(&mut self, id: &str, answer: AskAnswer) {
        if let Some(i) = self.interactions.iter_mut().find(|i| i.ask.id() == id) {
            i.answer = Some(answer);
        }
    }

    /// Ids of every message of the turn (user and assistant): the next turn's baseline.
    pub fn message_ids(&self) -> Vec<String> {
        self.user_message_id
            .iter()
            .cloned()
            .chain(self.messages.iter().map(|m| m.id.clone()))
            .collect()
    }

    /// What the turn still waits for, for diagnostics.
    pub fn pending(&self) -> String {
        let mut out = Vec::new();
        if !self.started {
            out.push("turn start (no new message or busy status yet)".to_string());
        } else if !self.idle_seen {
            let status = match &self.last_status {
                Some(SessionStatus::Retry {
                    attempt, message, ..
                }) => format!("retry attempt {attempt}: {message}"),
                Some(s) => format!("{s:?}").to_lowercase(),
                None => "unknown".to_string(),
            };
            out.push(format!("session idle (last status: {status})"));
        }
        let incomplete = self.incomplete();
        if !incomplete.is_empty() {
            out.push(format!(
                "completion of assistant message(s) {}",
                incomplete.join(", ")
            ));
        }
        for i in &self.interactions {
            if i.outcome.is_none() {
                let (kind, what) = match &i.ask {
                    Ask::Permission(p) => {
                        ("permission", format!("{} {:?}", p.permission, p.patterns))
                    }
                    Ask::Question(q) => (
                        "question",
                        q.questions
                            .iter()
                            .map(|x| x.question.clone())
                            .collect::<Vec<_>>()
                            .join(" / "),
                    ),
                };
                let answered = match &i.answer {
                    None | Some(AskAnswer::LeavePending) => "unanswered".to_string(),
                    Some(a) => format!("answered {a:?}, no confirmation yet"),
                };
                out.push(format!("{kind} {} ({what}): {answered}", i.ask.id()));
            }
        }
        let tail: Vec<&str> = self
            .trace
            .iter()
            .rev()
            .take(8)
            .rev()
            .map(String::as_str)
            .collect();
        out.push(format!("last events: [{}]", tail.join(", ")));
        out.join("; ")
    }

    /// The turn as collected so far.
    pub fn finish(self) -> Turn {
        let mut messages: Vec<TurnMessage> = self
            .messages
            .iter()
            .map(|info| TurnMessage {
                info: info.clone(),
                parts: Vec::new(),
            })
            .collect();
        let index: HashMap<&str, usize> = self
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.as_str(), i))
            .collect();
        for p in &self.parts {
            if let Some(&i) = index.get(p.message_id.as_str()) {
                messages[i].parts.push(p.clone());
            }
        }
        let all_parts = || messages.iter().flat_map(|m| &m.parts);
        let tool_calls = all_parts()
            .filter(|p| p.kind == "tool")
            .map(|p| {
                let state = p.state.clone();
                ToolCall {
                    tool: p.tool.clone().unwrap_or_default(),
                    call_id: p.call_id.clone().unwrap_or_default(),
                    message_id: p.message_id.clone(),
                    status: state
                        .as_ref()
                        .map_or(ToolStatus::Other, |s| s.status.clone()),
                    input: state.as_ref().map_or(Value::Null, |s| s.input.clone()),
                    output: state.as_ref().and_then(|s| s.output.clone()),
                    error: state.as_ref().and_then(|s| s.error.clone()),
                }
            })
            .collect();
        let text = all_parts()
            .filter(|p| p.kind == "text" && p.extra.get("synthetic") != Some(&Value::Bool(true)))
            .filter_map(|p| p.text.clone())
            .collect::<Vec<_>>()
            .join("\n");
        let structured = self.messages.iter().find_map(|m| m.structured.clone());
        let errors = self
            .messages
            .iter()
            .filter_map(|m| m.error.clone())
            .collect();
        Turn {
            session_id: self.session_id,
            user_message_id: self.user_message_id,
            tool_calls,
            text,
            text_delta_count: self.text_delta_count,
            structured,
            errors,
            session_errors: self.session_errors,
            interactions: self.interactions,
            trace: self.trace,
            messages,
            redactor: None,
        }
    }

    /// An idle counts only after this turn's busy status or assistant message: a stale idle of
    /// the previous turn (sent twice) must not end this one right after its user message.
    fn may_idle(&self) -> bool {
        self.busy_seen || !self.messages.is_empty()
    }

    fn incomplete(&self) -> Vec<String> {
        self.messages
            .iter()
            .filter(|m| m.time.completed.is_none())
            .map(|m| m.id.clone())
            .collect()
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

    fn upsert_message(&mut self, info: MessageInfo) {
        match self.messages.iter_mut().find(|m| m.id == info.id) {
            Some(m) => *m = info,
            None => self.messages.push(info),
        }
    }

    fn upsert_part(&mut self, part: Part) {
        match self.part_index.get(&part.id) {
            Some(&i) => self.parts[i] = part,
            None => {
                self.part_index.insert(part.id.clone(), self.parts.len());
                self.parts.push(part);
            }
        }
    }
}

/// The run report's turn, tools and asks lanes: the event by type, a tool part's status (one
/// span per call), an ask.
fn note_event(event: &Event) {
    use crate::timeline::{Lane, is_collecting, note, note_keyed};
    if !is_collecting() {
        return;
    }
    match event {
        Event::MessagePartUpdated { part, .. } if part.kind == "tool" => {
            let tool = part.tool.as_deref().unwrap_or("tool");
            let key = part.call_id.as_deref().unwrap_or(&part.id);
            let Some(state) = &part.state else {
                return note_keyed(Lane::Tools, tool, key, String::new);
            };
            let status = format!("{:?}", state.status).to_lowercase();
            note_keyed(Lane::Tools, &format!("{tool} {status}"), key, || {
                let mut text = state.input.to_string();
                if let Some(error) = &state.error {
                    text = format!("{text} → error: {error}");
                } else if let Some(output) = &state.output {
                    text = format!("{text} → {}", output.chars().take(300).collect::<String>());
                }
                text
            });
        }
        Event::PermissionAsked(req) => {
            note_keyed(Lane::Asks, "permission asked", &req.id, || {
                format!("{req:?}")
            });
        }
        Event::QuestionAsked(req) => {
            note_keyed(Lane::Asks, "question asked", &req.id, || format!("{req:?}"));
        }
        Event::PermissionReplied {
            request_id, reply, ..
        } => {
            note_keyed(Lane::Asks, "permission replied", request_id, || {
                format!("{reply:?}")
            });
        }
        Event::QuestionReplied {
            request_id,
            answers,
            ..
        } => {
            note_keyed(Lane::Asks, "question replied", request_id, || {
                format!("{answers:?}")
            });
        }
        Event::QuestionRejected { request_id, .. } => {
            note_keyed(Lane::Asks, "question rejected", request_id, String::new);
        }
        _ => {}
    }
    let kind = event.type_name();
    note(Lane::Turn, kind, || match event {
        Event::SessionStatus { status, .. } => format!("{status:?}"),
        Event::SessionError { error, .. } => format!("{error:?}"),
        _ => String::new(),
    });
}
