//! The observer: the runner's own subscription to an agent's events, made when the agent is
//! provisioned (before any product can start), kept for the whole scenario, and summarised as
//! [`Observed`] evidence of what the agent did whoever drove it.
//!
//! It reads `GET /global/event` rather than `GET /event`: one stream carries every directory's
//! events (a product may name another directory than the workspace), each with the directory it
//! belongs to, so on a shared server the agent's own are picked out by its workspace. It is also
//! not a listener of any directory's `/event`, so it never changes when the fixture agent starts
//! a turn (a turn waits for its client's stream, not for the observer's).
//!
//! The product's stream is not the observer's: a product whose stream drops (or is dropped by a
//! wire fault) leaves the record whole. When the observer's own stream ends (the agent stopped,
//! crashed, or its stream was cut), it subscribes again as soon as the agent runs, and the record
//! says that events in between may be missing. Messages come from the agent at record time
//! where it still answers for them, so a gap costs the event trace, not the messages.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::{Stream, StreamExt};
use serde_json::Value;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

use super::observed::{Fetched, Observed, SessionLog};
use crate::client::{Client, Event, loopback_http_client};
use crate::redact::Redactor;
use crate::sse::Splitter;

/// The longest wait (before scaling) for the observer's subscription when an agent starts, and
/// for the response and first frame of one subscription attempt.
const SUBSCRIBE_CEILING: Duration = Duration::from_secs(30);
/// The longest wait (before scaling), when a record is made, for the events the agent already
/// sent to reach the observer.
const CATCH_UP_CEILING: Duration = Duration::from_secs(10);
/// The ceiling (before scaling) of the status request that lets the observer catch up before
/// a stop: short, since a wedged server must still stop promptly.
const SETTLE_REQUEST_CEILING: Duration = Duration::from_secs(5);
/// The pause between subscription attempts while the agent runs but refuses: doubled each time
/// up to the maximum. A restart wakes the observer at once.
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(1);
/// The longest wait (before scaling) for the observer's own probe event to come back on its
/// stream (see [`Observer::confirm`]).
const PROBE_CEILING: Duration = Duration::from_secs(10);
/// How long one probe is given to come back before another is sent: a probe published before
/// OpenCode listens for the subscription is lost, not late. Doubled each time up to the maximum.
const PROBE_RETRY_FIRST: Duration = Duration::from_millis(10);
const PROBE_RETRY_MAX: Duration = Duration::from_millis(200);
/// The largest frame the observer reads, as the client's default bound.
const MAX_FRAME_BYTES: usize = crate::client::DEFAULT_MAX_FRAME_BYTES;

/// The gap a restart leaves in the record.
const RESTARTED: &str = "the agent restarted: events between the end of its event stream and \
                         the observer's new subscription may be missing";
/// The gap a stream that ended while the agent ran leaves in the record.
const STREAM_ENDED: &str = "the agent's event stream ended while it ran: events until the \
                            observer subscribed again may be missing";

/// What the observer needs of the agent it observes. The agent implements it over a weak
/// reference, so the observer (which the agent owns) never keeps the agent alive.
pub(crate) trait ObserverSource: Send + Sync + 'static {
    /// A client of the agent's current endpoint, without gates (observing never passes one),
    /// naming the agent's directory on a shared server; `None` once the agent is gone.
    fn client(&self) -> Option<Client>;
    /// The pid of the agent's server while it runs: a new pid is a restart.
    fn pid(&self) -> Option<u32>;
}

/// The observer of one agent. Dropping it ends its subscription.
pub(crate) struct Observer {
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("link", &*self.shared.link.borrow())
            .finish_non_exhaustive()
    }
}

/// Whose events are the agent's.
#[derive(Debug)]
enum Scope {
    /// Every directory's: a server of the agent's own.
    Server,
    /// Those of these directories and below: the agent's workspace on a shared server, as
    /// given and as resolved.
    Directories(Vec<String>),
}

impl Scope {
    fn covers(&self, directory: Option<&str>) -> bool {
        match self {
            Scope::Server => true,
            Scope::Directories(roots) => directory.is_some_and(|d| {
                roots.iter().any(|root| {
                    d.strip_prefix(root.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                })
            }),
        }
    }
}

struct Shared {
    redactor: Arc<Redactor>,
    scope: Scope,
    log: Mutex<SessionLog>,
    /// Every message's info in its last known state, in order of first appearance: what the
    /// scenario's turns spent (tokens, cost) and when they ran, for its budget.
    messages: Mutex<Vec<crate::client::MessageInfo>>,
    /// The subscription's state; every change (each event applied) wakes whoever waits on it.
    link: watch::Sender<Link>,
    /// Wakes the task: the agent (re)started.
    wake: Notify,
    /// A permission ask of the agent was answered `always`: OpenCode keeps the approval in the
    /// directory's instance (not in a session), so a shared server's pool must not hand that
    /// instance on.
    approved_always: std::sync::atomic::AtomicBool,
    /// The message of the observer's own `tui.toast.show` probes: never part of the record.
    probe: String,
    /// An exploring run's scheduler, told of each of the agent's events: its progress.
    scheduler: Option<Arc<crate::explore::Scheduler>>,
}

impl Shared {
    fn log(&self) -> std::sync::MutexGuard<'_, SessionLog> {
        // Feeding is a few pushes: a panic mid-way leaves a usable log.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Clone, Debug, Default)]
struct Link {
    /// The pid of the server whose stream is being read, while it is open.
    connected: Option<u32>,
    /// Events applied so far.
    applied: u64,
    /// The observer's own probes seen on its stream so far.
    probes: u64,
    /// Why the last subscription attempt failed, for the record when none succeeds in time.
    last_failure: Option<String>,
}

impl Observer {
    /// An observer of an agent whose events are every directory's of its server (`None`: a
    /// server of its own), or those of `workspace` and below (a shared server). It subscribes
    /// at [`attach`](Self::attach). In an exploring run, `scheduler` hears of each event.
    pub(crate) fn new(
        redactor: Arc<Redactor>,
        workspace: Option<&Path>,
        scheduler: Option<Arc<crate::explore::Scheduler>>,
    ) -> Self {
        let scope = match workspace {
            None => Scope::Server,
            Some(workspace) => {
                let mut roots = vec![workspace.display().to_string()];
                if let Ok(resolved) = std::fs::canonicalize(workspace) {
                    let resolved = resolved.display().to_string();
                    if !roots.contains(&resolved) {
                        roots.push(resolved);
                    }
                }
                Scope::Directories(roots)
            }
        };
        Self {
            shared: Arc::new(Shared {
                redactor,
                scope,
                log: Mutex::default(),
                messages: Mutex::default(),
                link: watch::Sender::new(Link::default()),
                wake: Notify::new(),
                approved_always: std::sync::atomic::AtomicBool::new(false),
                probe: format!("live-observer-probe-{}", crate::process::new_token()),
                scheduler,
            }),
            task: Mutex::new(None),
        }
    }

    /// Makes sure the observer reads the stream of the server `source` runs now, waiting (up
    /// to its ceiling) until it does: called when the agent is provisioned and after each
    /// start, so events from then on are observed. Nothing when the server does not run.
    /// Failing to subscribe in time fails nothing: the record says so, and the observer keeps
    /// trying in the background.
    pub(crate) async fn attach(&self, source: Arc<dyn ObserverSource>) {
        let Some(pid) = source.pid() else {
            return;
        };
        {
            let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
            if task.is_none() {
                *task = Some(tokio::spawn(run(self.shared.clone(), source)));
            }
        }
        if self.shared.link.borrow().connected == Some(pid) {
            return;
        }
        self.shared.wake.notify_one();
        let ceiling = crate::settings::scaled(SUBSCRIBE_CEILING);
        let mut link = self.shared.link.subscribe();
        let subscribed = tokio::time::timeout(ceiling, link.wait_for(|l| l.connected == Some(pid)));
        if !matches!(subscribed.await, Ok(Ok(_))) {
            let cause = self.shared.link.borrow().last_failure.clone();
            self.shared.log().note_gap(format!(
                "the observer could not subscribe to the agent's events within {ceiling:?} ({}): \
                 events until it did may be missing",
                cause.as_deref().unwrap_or("no answer")
            ));
        }
    }

    /// Proves that the observer's stream carries the agent's events from now on: has the
    /// agent's instance publish an event of the observer's own (`POST /tui/show-toast`) and
    /// waits until it comes back on the stream, sending it again while it does not.
    ///
    /// OpenCode 1.18.33 sends `server.connected` on `/global/event` before it listens to its
    /// bus for the subscriber, so an event an already booted instance (a warm workspace)
    /// publishes in the first milliseconds is lost (measured: 3 of 15 `session.created` sent at
    /// once). A fresh directory boots later than that; a warm one's first event must wait for
    /// this proof. The probe is not part of the record; not seen within its ceiling, the record
    /// says that events may be missing.
    pub(crate) async fn confirm(&self, source: &dyn ObserverSource) {
        if self.shared.link.borrow().connected.is_none() {
            // `attach` already noted why it has no stream.
            return;
        }
        let Some(client) = source.client() else {
            return;
        };
        let ceiling = crate::settings::scaled(PROBE_CEILING);
        let client = client.with_request_ceiling(ceiling);
        let mut link = self.shared.link.subscribe();
        let before = link.borrow().probes;
        let mut failure = None;
        let confirmed = tokio::time::timeout(ceiling, async {
            let mut retry = PROBE_RETRY_FIRST;
            loop {
                if let Err(e) = client.show_toast(&self.shared.probe).await {
                    failure = Some(e.to_string());
                }
                // A retry, not a settle: a probe that comes back ends the wait at once.
                let seen = link.wait_for(|l| l.probes > before);
                match tokio::time::timeout(retry, seen).await {
                    Ok(seen) => return seen.is_ok(),
                    Err(_) => retry = (retry * 2).min(PROBE_RETRY_MAX),
                }
            }
        })
        .await;
        if !matches!(confirmed, Ok(true)) {
            self.shared.log().note_gap(format!(
                "the observer's probe event did not come back on its stream within {ceiling:?} \
                 ({}): the agent's first events may be missing",
                failure.as_deref().unwrap_or("sent, never seen")
            ));
        }
    }

    /// Whether an ask of the agent may have been answered `always`: one was seen, or the record
    /// may be incomplete.
    pub(crate) fn may_have_approved_always(&self) -> bool {
        self.shared
            .approved_always
            .load(std::sync::atomic::Ordering::SeqCst)
            || self.shared.log().has_gaps()
    }

    /// Ends the subscription for good (the scenario ends).
    pub(crate) fn stop(&self) {
        if let Some(task) = self.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
        self.shared.link.send_modify(|l| l.connected = None);
    }

    /// The record so far: waits (briefly) for the events the agent already sent to arrive,
    /// reads each session's messages and the session list from the agent when it runs, and
    /// summarises (see [`SessionLog::observed`]).
    pub(crate) async fn observed(&self, source: &dyn ObserverSource) -> Observed {
        let mut fetched = Fetched::default();
        match source.client().filter(|_| source.pid().is_some()) {
            Some(client) => {
                self.catch_up(&client).await;
                fetched.listed = client.list_sessions().await.unwrap_or_default();
                let mut ids = self.shared.log().session_ids();
                for info in &fetched.listed {
                    if !ids.contains(&info.id) {
                        ids.push(info.id.clone());
                    }
                }
                for id in ids {
                    // A session the agent no longer answers for (deleted, or one whose prompt
                    // carried a format: OpenCode answers 400) keeps what its events said.
                    if let Ok(messages) = client.messages(&id).await {
                        fetched.messages.insert(id, messages);
                    }
                }
            }
            None => {
                // Stopped: what the server wrote before it ended may still be on its way.
                let mut link = self.shared.link.subscribe();
                let ended = link.wait_for(|l| l.connected.is_none());
                let _ =
                    tokio::time::timeout(crate::settings::scaled(CATCH_UP_CEILING), ended).await;
            }
        }
        self.shared.log().observed(&fetched, &self.shared.redactor)
    }

    /// Every message the agent reported (`message.updated`), each in its last known state, in
    /// order of first appearance; when `settle`, after letting the events the agent already
    /// sent arrive (a request to the agent, when it runs). Read from the events, not from the agent: a session OpenCode no longer lists
    /// the messages of (a structured prompt's) and a stopped agent's count too.
    pub(crate) async fn messages(
        &self,
        source: &dyn ObserverSource,
        settle: bool,
    ) -> Vec<crate::client::MessageInfo> {
        if settle {
            self.settle(source).await;
        }
        self.shared
            .messages
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Lets the events the agent already sent reach the observer before its server stops: a
    /// stop right after a product saw its turn end must not cut that turn's last events (still
    /// on their way to the observer's stream) from the record.
    pub(crate) async fn settle(&self, source: &dyn ObserverSource) {
        if source.pid().is_none() {
            return;
        }
        if let Some(client) = source.client() {
            let ceiling = crate::settings::scaled(SETTLE_REQUEST_CEILING);
            self.catch_up(&client.with_request_ceiling(ceiling)).await;
        }
    }

    /// Waits until every session the agent reports idle is idle in the events observed too:
    /// the events of a turn the product saw end may still be on their way to the observer.
    async fn catch_up(&self, client: &Client) {
        if self.shared.link.borrow().connected.is_none() {
            return;
        }
        let Ok(busy) = client.statuses().await else {
            return;
        };
        let behind = |busy: &BTreeMap<String, _>| {
            let log = self.shared.log();
            log.unsettled()
                .into_iter()
                .filter(|id| !busy.contains_key(id))
                .collect::<Vec<_>>()
        };
        let ceiling = crate::settings::scaled(CATCH_UP_CEILING);
        let mut link = self.shared.link.subscribe();
        let caught_up = link.wait_for(|_| behind(&busy).is_empty());
        if tokio::time::timeout(ceiling, caught_up).await.is_err() {
            let late = behind(&busy);
            let mut log = self.shared.log();
            for id in late {
                log.note_gap(format!(
                    "the agent reported {id} idle, but the observer had not seen it go idle \
                     after {ceiling:?}: its last events may be missing"
                ));
            }
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The observer's task: subscribe while the agent runs, read until the stream ends, again.
async fn run(shared: Arc<Shared>, source: Arc<dyn ObserverSource>) {
    // The server of the last subscription, and why its stream ended when the observer gave
    // up on a frame (a transport end is the usual end of a stopping server: no cause).
    let mut previous: Option<(u32, Option<String>)> = None;
    let mut unreadable = HashSet::new();
    let mut retry = RETRY_FIRST;
    loop {
        if let Some(pid) = source.pid() {
            match subscribe(&*source).await {
                Ok(stream) => {
                    // Only a new subscription makes a gap: a stream that ended with its
                    // server, never restarted, missed nothing.
                    if let Some((old, failure)) = previous.take() {
                        let mut log = shared.log();
                        log.note_gap(match failure {
                            _ if old != pid => RESTARTED.to_string(),
                            Some(failure) => format!(
                                "the observer gave up on its event stream ({failure}): events \
                                 until it subscribed again may be missing"
                            ),
                            None => STREAM_ENDED.to_string(),
                        });
                        log.forget_statuses();
                    }
                    retry = RETRY_FIRST;
                    shared.link.send_modify(|l| l.connected = Some(pid));
                    let failure = read(&shared, &*source, stream, pid, &mut unreadable).await;
                    previous = Some((pid, failure));
                    shared.link.send_modify(|l| l.connected = None);
                    continue;
                }
                Err(cause) => shared
                    .link
                    .send_modify(|l| l.last_failure = Some(shared.redactor.redact(&cause))),
            }
        }
        tokio::select! {
            () = shared.wake.notified() => {}
            () = tokio::time::sleep(retry) => {}
        }
        retry = (retry * 2).min(RETRY_MAX);
    }
}

type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Why a subscription stopped giving frames.
#[derive(Debug)]
enum StreamEnd {
    /// The body ended or broke: the server went away or cut it.
    Transport,
    /// A frame the observer cannot read (too large, not UTF-8): it gave up on the stream.
    Frame(String),
}

/// One open `GET /global/event`, cut into frames.
struct Subscription {
    body: Body,
    frames: Splitter,
    /// Bytes received and not yet handed on as a frame.
    pending: usize,
}

impl Subscription {
    /// The next frame's `data` (its data lines joined).
    async fn next_data(&mut self) -> Result<String, StreamEnd> {
        loop {
            while let Some(frame) = self.frames.next_frame() {
                self.pending = self.pending.saturating_sub(frame.len());
                if let Some(data) = data_of(&frame).map_err(StreamEnd::Frame)? {
                    return Ok(data);
                }
            }
            match self.body.next().await {
                Some(Ok(chunk)) => {
                    self.pending += chunk.len();
                    if self.pending > MAX_FRAME_BYTES {
                        let cause = format!("a frame exceeds {MAX_FRAME_BYTES} bytes");
                        return Err(StreamEnd::Frame(cause));
                    }
                    self.frames.push(&chunk);
                }
                Some(Err(_)) | None => return Err(StreamEnd::Transport),
            }
        }
    }
}

/// The data lines of a frame joined by LF; `None` for a frame without data (a comment).
fn data_of(frame: &[u8]) -> Result<Option<String>, String> {
    let text = std::str::from_utf8(frame).map_err(|e| format!("a frame is not UTF-8: {e}"))?;
    let mut data: Option<String> = None;
    for line in text.split(['\n', '\r']).filter(|l| !l.is_empty()) {
        let Some(value) = line.strip_prefix("data:") else {
            continue;
        };
        let value = value.strip_prefix(' ').unwrap_or(value);
        match &mut data {
            Some(joined) => {
                joined.push('\n');
                joined.push_str(value);
            }
            None => data = Some(value.to_string()),
        }
    }
    Ok(data)
}

/// Subscribes to the agent's global event stream and waits for `server.connected`: every
/// later event is seen.
async fn subscribe(source: &dyn ObserverSource) -> Result<Subscription, String> {
    let client = source.client().ok_or("the agent is gone")?;
    let ceiling = crate::settings::scaled(SUBSCRIBE_CEILING);
    let request = loopback_http_client()
        .get(format!("{}/global/event", client.base_url()))
        .send();
    let response = tokio::time::timeout(ceiling, request)
        .await
        .map_err(|_| format!("GET /global/event did not answer within {ceiling:?}"))?
        .map_err(|e| format!("GET /global/event: {e}"))?;
    if !response.status().is_success() {
        return Err(format!("GET /global/event answered {}", response.status()));
    }
    let mut subscription = Subscription {
        body: Box::pin(response.bytes_stream()),
        frames: Splitter::default(),
        pending: 0,
    };
    let first = match tokio::time::timeout(ceiling, subscription.next_data()).await {
        Err(_) => return Err(format!("no server.connected within {ceiling:?}")),
        Ok(Err(StreamEnd::Transport)) => {
            return Err("the stream ended before server.connected".into());
        }
        Ok(Err(StreamEnd::Frame(cause))) => return Err(cause),
        Ok(Ok(first)) => first,
    };
    match payload_type(&first).as_deref() {
        Some("server.connected") => Ok(subscription),
        other => Err(format!("expected server.connected first, got {other:?}")),
    }
}

fn payload_type(data: &str) -> Option<String> {
    let frame: Value = serde_json::from_str(data).ok()?;
    let payload = frame.get("payload").unwrap_or(&frame);
    payload.get("type")?.as_str().map(str::to_string)
}

/// Reads `stream` into the log until it ends; the cause when the observer gave up on a frame.
/// A wake-up while the agent runs another server than `pid` (a restart whose old stream has
/// not ended yet) ends it too.
async fn read(
    shared: &Shared,
    source: &dyn ObserverSource,
    mut stream: Subscription,
    pid: u32,
    unreadable: &mut HashSet<String>,
) -> Option<String> {
    loop {
        tokio::select! {
            data = stream.next_data() => match data {
                Ok(data) => apply(shared, &data, unreadable),
                Err(StreamEnd::Transport) => return None,
                Err(StreamEnd::Frame(cause)) => return Some(shared.redactor.redact(&cause)),
            },
            () = shared.wake.notified() => {
                if source.pid() != Some(pid) {
                    return None;
                }
            }
        }
    }
}

/// Feeds one global frame to the log when it is one of the agent's events.
fn apply(shared: &Shared, data: &str, unreadable: &mut HashSet<String>) {
    let Ok(Value::Object(mut frame)) = serde_json::from_str::<Value>(data) else {
        return;
    };
    let directory = frame.get("directory").and_then(Value::as_str);
    if !shared.scope.covers(directory) {
        return;
    }
    let Some(payload) = frame.remove("payload") else {
        return;
    };
    let kind = payload.get("type").and_then(Value::as_str).unwrap_or("");
    // `sync` repeats each event for OpenCode's own replication.
    if kind == "sync" {
        return;
    }
    // The observer's own probe (`Observer::confirm`): proof of the stream, not the agent's.
    if kind == "tui.toast.show"
        && payload
            .pointer("/properties/message")
            .and_then(Value::as_str)
            == Some(shared.probe.as_str())
    {
        shared.link.send_modify(|l| l.probes += 1);
        return;
    }
    if let Some(scheduler) = &shared.scheduler {
        scheduler.agent_event(kind);
    }
    if kind == "permission.replied"
        && payload.pointer("/properties/reply").and_then(Value::as_str) == Some("always")
    {
        shared
            .approved_always
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    match Event::parse(&payload.to_string(), &shared.redactor) {
        Ok(event) => {
            if let Event::MessageUpdated { info, .. } = &event {
                let mut messages = shared.messages.lock().unwrap_or_else(|e| e.into_inner());
                match messages.iter_mut().find(|m| m.id == info.id) {
                    Some(known) => *known = info.clone(),
                    None => messages.push(info.clone()),
                }
            }
            shared.log().feed(&event)
        }
        Err(e) => {
            if unreadable.insert(kind.to_string()) {
                shared
                    .log()
                    .note_gap(format!("an event the observer could not read: {e}"));
            }
        }
    }
    shared.link.send_modify(|l| l.applied += 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_agent_keeps_its_workspace_and_below() {
        let scope = Scope::Directories(vec!["/r/ws".into()]);
        assert!(scope.covers(Some("/r/ws")));
        assert!(scope.covers(Some("/r/ws/sub")));
        assert!(!scope.covers(Some("/r/ws2")));
        assert!(!scope.covers(Some("/r")));
        assert!(!scope.covers(None));
        assert!(Scope::Server.covers(Some("/anywhere")));
        assert!(Scope::Server.covers(None));
    }

    #[test]
    fn data_lines_are_joined_and_comments_have_none() {
        assert_eq!(
            data_of(b"data: {\"a\":\ndata: 1}\n\n").unwrap(),
            Some("{\"a\":\n1}".into())
        );
        assert_eq!(data_of(b": keep-alive\n\n").unwrap(), None);
        assert_eq!(data_of(b"data:x\r\n\r\n").unwrap(), Some("x".into()));
        assert!(data_of(b"data: \xff\n\n").is_err());
    }

    #[test]
    fn the_payload_type_is_read_from_a_global_frame() {
        assert_eq!(
            payload_type(r#"{"payload":{"id":"evt_1","type":"server.connected"}}"#).as_deref(),
            Some("server.connected")
        );
        assert_eq!(payload_type("not json"), None);
    }
}
