//! Running one task: a session, its events, the prompt, the asks, the deadline, the outcome.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::client::{Message, OpenCode};
use crate::error::ProductError;
use crate::events::{AgentEvent, Events, PermissionAsk};
use crate::hooks::{Hooks, NoHooks, Point};
use crate::policy::{Verdict, judge};

/// How many times a lost event stream is re-subscribed before the task fails.
const RECONNECTS: u32 = 5;

/// What to ask the agent, and how long to let it work.
#[derive(Clone, Debug)]
pub struct Task {
    prompt: String,
    title: String,
    deadline: Duration,
    settle: Duration,
}

impl Task {
    /// A task of `prompt`: 120 s until the product aborts it, then 30 s for the agent to settle.
    pub fn new(prompt: impl Into<String>) -> Task {
        Task {
            prompt: prompt.into(),
            title: "product task".into(),
            deadline: Duration::from_secs(120),
            settle: Duration::from_secs(30),
        }
    }

    /// The session's title.
    pub fn title(mut self, title: impl Into<String>) -> Task {
        self.title = title.into();
        self
    }

    /// How long after the prompt the product aborts the session.
    pub fn deadline(mut self, deadline: Duration) -> Task {
        self.deadline = deadline;
        self
    }

    /// How long the agent may take to settle after an abort, and the ceiling of waiting for a
    /// reply in flight.
    pub fn settle(mut self, settle: Duration) -> Task {
        self.settle = settle;
        self
    }
}

/// Stops a running task as its deadline would: a user's "stop" button. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Cancel {
    cancelled: Arc<watch::Sender<bool>>,
}

impl Default for Cancel {
    fn default() -> Self {
        Cancel {
            cancelled: Arc::new(watch::channel(false).0),
        }
    }
}

impl Cancel {
    /// A cancel not yet pulled.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Aborts the task (once; later calls do nothing).
    pub fn cancel(&self) {
        self.cancelled.send_replace(true);
    }

    /// Whether [`Cancel::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        *self.cancelled.borrow()
    }

    async fn cancelled(&self) {
        let mut seen = self.cancelled.subscribe();
        // The sender lives in `self`, so the wait cannot fail.
        let _ = seen.wait_for(|cancelled| *cancelled).await;
    }
}

/// Why the product aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortCause {
    /// The task's deadline passed.
    Deadline,
    /// [`Cancel::cancel`] was called.
    Cancelled,
    /// Someone else aborted the session.
    Elsewhere,
}

/// How a task ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The agent finished; its answer.
    Completed {
        /// The assistant's text.
        text: String,
    },
    /// The turn ended aborted.
    Aborted {
        /// Who aborted it.
        cause: AbortCause,
    },
    /// The turn ended with an error.
    Failed {
        /// The error's name and message.
        reason: String,
    },
}

/// What became of the product's reply to one ask.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "delivery", rename_all = "snake_case")]
pub enum Delivery {
    /// Still in flight (only while the task runs).
    Pending,
    /// The agent accepted it.
    Replied,
    /// The agent refused it (e.g. 404: the ask was settled already).
    Refused {
        /// The status, when the agent answered.
        status: Option<u16>,
    },
    /// The task was aborted between judging the ask and replying: no reply was sent.
    Withheld,
    /// The ask arrived after the abort: no reply was sent.
    Ignored,
}

/// One permission ask of the task and what the product did with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AskRecord {
    /// `read`, `edit`, …
    pub permission: String,
    /// What it would touch.
    pub patterns: Vec<String>,
    /// The product's verdict.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// What became of the reply.
    #[serde(flatten)]
    pub delivery: Delivery,
}

/// The result of a task.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TaskReport {
    /// The session (`ses_…`); volatile, so not part of the serialized report.
    #[serde(skip)]
    pub session_id: String,
    /// How it ended.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// Why the product aborted, when it did (a turn that completed before the abort took
    /// effect is `Completed` with an abort here).
    pub abort: Option<AbortCause>,
    /// The asks, in the order they arrived.
    pub asks: Vec<AskRecord>,
    /// How often the event stream was re-subscribed.
    pub reconnects: u32,
}

/// The product: runs tasks on one OpenCode server in one workspace.
#[derive(Debug)]
pub struct Product<H = NoHooks> {
    client: OpenCode,
    hooks: Arc<H>,
    /// Reply tasks read the abort flag before their [`Point::BeforeReply`] instead of after it.
    #[cfg(feature = "racy")]
    racy_reply: bool,
    /// The event stream is opened only after the prompt was accepted.
    #[cfg(feature = "racy")]
    late_subscribe: bool,
    /// A re-subscribed stream is trusted to bring the asks: the missed ones are not read.
    #[cfg(feature = "racy")]
    forgetful_reconnect: bool,
}

impl Product<NoHooks> {
    /// A product using `client`.
    pub fn new(client: OpenCode) -> Product<NoHooks> {
        Product {
            client,
            hooks: Arc::new(NoHooks),
            #[cfg(feature = "racy")]
            racy_reply: false,
            #[cfg(feature = "racy")]
            late_subscribe: false,
            #[cfg(feature = "racy")]
            forgetful_reconnect: false,
        }
    }
}

impl<H: Hooks> Product<H> {
    /// The same product calling `hooks` at its [`Point`]s.
    pub fn with_hooks<G: Hooks>(self, hooks: G) -> Product<G> {
        Product {
            client: self.client,
            hooks: Arc::new(hooks),
            #[cfg(feature = "racy")]
            racy_reply: self.racy_reply,
            #[cfg(feature = "racy")]
            late_subscribe: self.late_subscribe,
            #[cfg(feature = "racy")]
            forgetful_reconnect: self.forgetful_reconnect,
        }
    }

    /// Test-only (feature `racy`): re-introduces a check-then-act race for the exploration
    /// tests. A reply task reads whether the task is aborting *before* waiting at
    /// [`Point::BeforeReply`] and acts on that stale answer after it, so a cancel that lands
    /// while the reply waits there no longer withholds the reply: it goes out beside the abort,
    /// and may reach the agent after the abort cancelled its ask.
    #[cfg(feature = "racy")]
    pub fn with_racy_reply(mut self) -> Self {
        self.racy_reply = true;
        self
    }

    /// Test-only (feature `racy`): re-introduces a lost-event race for the exploration tests.
    /// The product opens its event stream only once its prompt was accepted, so an agent that
    /// ends the turn before the stream is open leaves the product waiting for a `session.idle`
    /// that already went: it aborts the finished task at its deadline.
    #[cfg(feature = "racy")]
    pub fn with_late_subscribe(mut self) -> Self {
        self.late_subscribe = true;
        self
    }

    /// Test-only (feature `racy`): re-introduces a lost-event race for the exploration tests.
    /// After its event stream dropped and was subscribed again, the product reads whether the
    /// session is still busy but not the asks it missed meanwhile: an ask the agent made while
    /// the stream was down is never answered, and the agent waits on it until the task is
    /// stopped or its deadline.
    #[cfg(feature = "racy")]
    pub fn with_forgetful_reconnect(mut self) -> Self {
        self.forgetful_reconnect = true;
        self
    }

    /// Its client.
    pub fn client(&self) -> &OpenCode {
        &self.client
    }

    /// Runs `task` until the agent settles: creates a session, subscribes to its events, posts
    /// the prompt, answers asks by the policy, aborts at the deadline or on `cancel`, and reads
    /// the outcome from the session's messages. A lost event stream is re-subscribed and
    /// the asks and idleness missed meanwhile are read from the agent.
    pub async fn run(&self, task: &Task, cancel: &Cancel) -> Result<TaskReport, ProductError> {
        let session_id = self.client.create_session(&task.title).await?;
        self.hooks.at(Point::SessionCreated).await;
        #[cfg(feature = "racy")]
        if self.late_subscribe {
            self.hooks.at(Point::BeforePrompt).await;
            self.client.prompt_async(&session_id, &task.prompt).await?;
            let events = self.client.subscribe().await?;
            return self.drive(task, session_id, events, cancel).await;
        }
        let events = self.client.subscribe().await?;
        self.hooks.at(Point::BeforePrompt).await;
        self.client.prompt_async(&session_id, &task.prompt).await?;
        self.drive(task, session_id, events, cancel).await
    }

    /// Follows the prompted session on `events` until the task ends.
    async fn drive(
        &self,
        task: &Task,
        session_id: String,
        events: Events,
        cancel: &Cancel,
    ) -> Result<TaskReport, ProductError> {
        Run {
            product: self,
            task,
            session_id,
            events,
            asks: Vec::new(),
            seen: HashSet::new(),
            replies: JoinSet::new(),
            aborting: Arc::new(AtomicBool::new(false)),
            abort: None,
            started: false,
            idle_seen: false,
            reconnects: 0,
        }
        .drive(cancel)
        .await
    }
}

/// The state of one running task.
struct Run<'p, H> {
    product: &'p Product<H>,
    task: &'p Task,
    session_id: String,
    events: Events,
    asks: Vec<AskRecord>,
    seen: HashSet<String>,
    replies: JoinSet<(usize, Delivery)>,
    /// Read by reply tasks right before they post.
    aborting: Arc<AtomicBool>,
    abort: Option<AbortCause>,
    /// The turn began (busy, or an assistant message): an idle before that is a stale one.
    started: bool,
    /// `session.idle` arrived since the turn began: the turn ends once its messages are
    /// complete (a tool step completes one assistant message and starts the next, so a
    /// completed message alone ends nothing).
    idle_seen: bool,
    reconnects: u32,
}

impl<H: Hooks> Run<'_, H> {
    async fn drive(mut self, cancel: &Cancel) -> Result<TaskReport, ProductError> {
        let deadline = Instant::now() + self.task.deadline;
        let mut settle_by: Option<Instant> = None;
        loop {
            let settled = tokio::select! {
                Some(done) = self.replies.join_next() => {
                    self.delivered(done);
                    None
                }
                event = self.events.next() => match event {
                    Some(Ok(event)) => self.on_event(event).await?,
                    Some(Err(ProductError::Decode { what, cause })) => {
                        return Err(ProductError::Decode { what, cause });
                    }
                    Some(Err(_)) | None => {
                        self.reconnect().await?;
                        self.resync().await?
                    }
                },
                _ = tokio::time::sleep_until(deadline), if self.abort.is_none() => {
                    self.abort(AbortCause::Deadline).await?;
                    settle_by = Some(Instant::now() + self.task.settle);
                    None
                }
                _ = cancel.cancelled(), if self.abort.is_none() => {
                    self.abort(AbortCause::Cancelled).await?;
                    settle_by = Some(Instant::now() + self.task.settle);
                    None
                }
                _ = sleep_until_some(settle_by) => {
                    return Err(ProductError::NotSettled {
                        after: self.task.settle,
                        state: "aborted, waiting for the session to go idle".into(),
                    });
                }
            };
            if let Some(report) = settled {
                return Ok(report);
            }
        }
    }

    /// Acts on one event; the report when it ended the task.
    async fn on_event(&mut self, event: AgentEvent) -> Result<Option<TaskReport>, ProductError> {
        if event.session_id() != Some(self.session_id.as_str()) {
            return Ok(None);
        }
        match event {
            AgentEvent::Status { status, .. } if status != "idle" => {
                self.started = true;
                self.idle_seen = false;
            }
            AgentEvent::AssistantUpdated { completed, .. } => {
                self.started = true;
                // After an abort the idle can precede the last message's completion.
                if completed && self.idle_seen {
                    return self.collect().await;
                }
            }
            AgentEvent::Idle { .. } if self.started => {
                self.idle_seen = true;
                return self.collect().await;
            }
            AgentEvent::PermissionAsked(ask) => self.on_ask(ask),
            _ => {}
        }
        Ok(None)
    }

    /// Judges an ask and replies in a task of its own, so the product keeps reading events
    /// (and can abort) while the reply is in flight.
    fn on_ask(&mut self, ask: PermissionAsk) {
        if !self.seen.insert(ask.id.clone()) {
            return;
        }
        let verdict = judge(&ask, self.product.client.directory());
        let late = self.abort.is_some();
        self.asks.push(AskRecord {
            permission: ask.permission.clone(),
            patterns: ask.patterns.clone(),
            verdict: verdict.clone(),
            delivery: if late {
                Delivery::Ignored
            } else {
                Delivery::Pending
            },
        });
        if late {
            return;
        }
        let index = self.asks.len() - 1;
        let client = self.product.client.clone();
        let hooks = self.product.hooks.clone();
        let aborting = self.aborting.clone();
        #[cfg(feature = "racy")]
        let racy = self.product.racy_reply;
        self.replies.spawn(async move {
            // The racy variant decides on what it read before the point.
            #[cfg(feature = "racy")]
            let decided = racy.then(|| aborting.load(Ordering::SeqCst));
            hooks.at(Point::BeforeReply).await;
            // Read after the point: a cancel that landed while the reply waited there withholds it.
            let aborted = aborting.load(Ordering::SeqCst);
            #[cfg(feature = "racy")]
            let aborted = decided.unwrap_or(aborted);
            if aborted {
                return (index, Delivery::Withheld);
            }
            let sent = client
                .reply(&ask.id, verdict.reply(), verdict.message())
                .await;
            let delivery = match sent {
                Ok(()) => Delivery::Replied,
                Err(e) => Delivery::Refused { status: e.status() },
            };
            (index, delivery)
        });
    }

    fn delivered(&mut self, done: Result<(usize, Delivery), tokio::task::JoinError>) {
        // A reply task only ends by returning: a panic in it is a bug to surface.
        let (index, delivery) = done.unwrap_or_else(|e| panic!("a reply task failed: {e}"));
        self.asks[index].delivery = delivery;
    }

    async fn abort(&mut self, cause: AbortCause) -> Result<(), ProductError> {
        self.abort = Some(cause);
        self.aborting.store(true, Ordering::SeqCst);
        self.product.hooks.at(Point::BeforeAbort).await;
        self.product.client.abort(&self.session_id).await?;
        self.product.hooks.at(Point::AfterAbort).await;
        Ok(())
    }

    async fn reconnect(&mut self) -> Result<(), ProductError> {
        self.product.hooks.at(Point::StreamLost).await;
        let mut last = String::new();
        for attempt in 0..RECONNECTS {
            if attempt > 0 {
                // Back off: the agent may be restarting.
                tokio::time::sleep(Duration::from_millis(100 << attempt)).await;
            }
            match self.product.client.subscribe().await {
                Ok(events) => {
                    self.events = events;
                    self.reconnects += 1;
                    return Ok(());
                }
                Err(e) => last = e.to_string(),
            }
        }
        Err(ProductError::StreamLost {
            attempts: RECONNECTS,
            last,
        })
    }

    /// Nothing is replayed on a new subscription: reads what was missed from the agent (asks
    /// still waiting, and whether the session went idle).
    async fn resync(&mut self) -> Result<Option<TaskReport>, ProductError> {
        let client = &self.product.client;
        #[cfg(feature = "racy")]
        let forgetful = self.product.forgetful_reconnect;
        #[cfg(not(feature = "racy"))]
        let forgetful = false;
        let missed: Vec<PermissionAsk> = if forgetful {
            Vec::new()
        } else {
            client
                .pending_permissions()
                .await?
                .into_iter()
                .filter(|ask| ask.session_id == self.session_id)
                .collect()
        };
        let busy = client.statuses().await?.contains_key(&self.session_id);
        // Replies go out after both reads, so the product's requests come in one order.
        for ask in missed {
            self.on_ask(ask);
        }
        if busy {
            self.started = true;
            return Ok(None);
        }
        // Idle now: the turn ended while the stream was down, or has not begun (then its
        // messages are not complete, and the events say the rest).
        self.idle_seen = true;
        self.collect().await
    }

    /// Reads the outcome once the turn's last assistant message is complete; `None` while it
    /// is not (the session went idle before the turn began, or before the message completed).
    async fn collect(&mut self) -> Result<Option<TaskReport>, ProductError> {
        // Replies in flight belong to the outcome.
        let settle = self.task.settle;
        let waited = tokio::time::timeout(settle, async {
            while let Some(done) = self.replies.join_next().await {
                self.delivered(done);
            }
        })
        .await;
        if waited.is_err() {
            return Err(ProductError::NotSettled {
                after: settle,
                state: "a permission reply was still in flight".into(),
            });
        }
        self.product.hooks.at(Point::BeforeCollect).await;
        let messages = self.product.client.messages(&self.session_id).await?;
        let Some(outcome) = outcome(&messages, self.abort) else {
            return Ok(None);
        };
        Ok(Some(TaskReport {
            session_id: self.session_id.clone(),
            outcome,
            abort: self.abort,
            asks: std::mem::take(&mut self.asks),
            reconnects: self.reconnects,
        }))
    }
}

async fn sleep_until_some(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The outcome of the last turn of `messages`, once its assistant messages are all complete.
pub(crate) fn outcome(messages: &[Message], abort: Option<AbortCause>) -> Option<Outcome> {
    let turn_start = messages.iter().rposition(|m| m.role() == "user")? + 1;
    let answers = &messages[turn_start..];
    if answers.is_empty() || answers.iter().any(|m| !m.is_completed()) {
        return None;
    }
    let errors: Vec<(String, String)> = answers.iter().filter_map(Message::error).collect();
    if errors.iter().any(|(name, _)| name == "MessageAbortedError") {
        return Some(Outcome::Aborted {
            cause: abort.unwrap_or(AbortCause::Elsewhere),
        });
    }
    if let Some((name, message)) = errors.first() {
        return Some(Outcome::Failed {
            reason: format!("{name}: {message}"),
        });
    }
    Some(Outcome::Completed {
        text: answers.iter().map(Message::text).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(role: &str, completed: bool, error: Option<&str>, text: &str) -> Message {
        let mut info = json!({"role": role, "time": {"created": 1}});
        if completed {
            info["time"]["completed"] = json!(2);
        }
        if let Some(name) = error {
            info["error"] = json!({"name": name, "data": {"message": "why"}});
        }
        serde_json::from_value(json!({"info": info, "parts": [{"type": "text", "text": text}]}))
            .unwrap()
    }

    #[test]
    fn a_turn_is_read_only_once_its_answers_are_complete() {
        let user = message("user", false, None, "do it");
        assert_eq!(outcome(std::slice::from_ref(&user), None), None);
        let running = message("assistant", false, None, "");
        assert_eq!(outcome(&[user.clone(), running], None), None);
        let done = message("assistant", true, None, "Done.");
        assert_eq!(
            outcome(&[user, done], Some(AbortCause::Cancelled)),
            Some(Outcome::Completed {
                text: "Done.".into()
            })
        );
    }

    #[test]
    fn an_aborted_or_failed_turn_says_so() {
        let user = message("user", false, None, "do it");
        let aborted = message("assistant", true, Some("MessageAbortedError"), "");
        assert_eq!(
            outcome(&[user.clone(), aborted.clone()], Some(AbortCause::Deadline)),
            Some(Outcome::Aborted {
                cause: AbortCause::Deadline
            })
        );
        assert_eq!(
            outcome(&[user.clone(), aborted], None),
            Some(Outcome::Aborted {
                cause: AbortCause::Elsewhere
            })
        );
        let failed = message("assistant", true, Some("APIError"), "");
        assert_eq!(
            outcome(&[user, failed], None),
            Some(Outcome::Failed {
                reason: "APIError: why".into()
            })
        );
    }

    #[test]
    fn only_the_last_turn_counts() {
        let old = [
            message("user", false, None, "first"),
            message("assistant", true, Some("APIError"), ""),
        ];
        let mut messages = old.to_vec();
        messages.push(message("user", false, None, "second"));
        assert_eq!(outcome(&messages, None), None);
        messages.push(message("assistant", true, None, "Fine."));
        assert_eq!(
            outcome(&messages, None),
            Some(Outcome::Completed {
                text: "Fine.".into()
            })
        );
    }

    #[test]
    fn the_report_serializes_without_volatile_ids() {
        let report = TaskReport {
            session_id: "ses_1".into(),
            outcome: Outcome::Aborted {
                cause: AbortCause::Cancelled,
            },
            abort: Some(AbortCause::Cancelled),
            asks: vec![AskRecord {
                permission: "read".into(),
                patterns: vec!["a.txt".into()],
                verdict: Verdict::Approve,
                delivery: Delivery::Withheld,
            }],
            reconnects: 0,
        };
        assert_eq!(
            serde_json::to_value(&report).unwrap(),
            json!({"outcome": "aborted", "cause": "cancelled", "abort": "cancelled",
                   "asks": [{"permission": "read", "patterns": ["a.txt"],
                             "verdict": "approve", "delivery": "withheld"}],
                   "reconnects": 0})
        );
    }
}
