//! `ScriptedModel`: the cheap handle a scenario scripts and inspects.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

use super::error::ModelError;
use super::recorded_answers::RecordedAnswers;
use super::recording::{Answer, ModelRequest, ModelRequestSummary};
use super::reply::Reply;
use super::rules::{Rule, Script};

/// State shared by the handle and the server.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) script: Mutex<Script>,
    pub(crate) model_name: String,
    pub(crate) addr: SocketAddr,
    /// The number of requests received so far, for waiters.
    pub(crate) arrivals: watch::Sender<usize>,
    /// What answers chat requests instead of the script, set once (a cassette replayed or
    /// recorded); unset, the script answers.
    recorded: OnceLock<Arc<dyn RecordedAnswers>>,
    /// Each scripted stream's time to its first output chunk in ms, by request `seq`, as it
    /// was streamed: a scenario's time-to-first-token budget on the scripted model.
    first_tokens: Mutex<std::collections::HashMap<usize, u64>>,
    /// The port the scenario's agent reaches the model at, when not `addr`'s: a warm workspace
    /// of a shared server names its own stable port, which forwards here.
    reached_at: OnceLock<u16>,
    /// An exploring run's scheduler: each answer (but a title's) is a step it holds.
    scheduler: OnceLock<Arc<crate::explore::Scheduler>>,
}

impl Shared {
    pub(crate) fn new(model_name: String, addr: SocketAddr) -> Self {
        Self {
            script: Mutex::new(Script::default()),
            model_name,
            addr,
            arrivals: watch::channel(0).0,
            recorded: OnceLock::new(),
            first_tokens: Mutex::default(),
            reached_at: OnceLock::new(),
            scheduler: OnceLock::new(),
        }
    }

    /// Makes each answer a step of an exploring run's `scheduler`. Once.
    pub(crate) fn explore_with(&self, scheduler: Arc<crate::explore::Scheduler>) {
        let _ = self.scheduler.set(scheduler);
    }

    /// The exploring run's scheduler, if the run explores.
    pub(crate) fn scheduler(&self) -> Option<&Arc<crate::explore::Scheduler>> {
        self.scheduler.get()
    }

    /// What answers chat requests instead of the script, if anything does.
    pub(crate) fn recorded_answers(&self) -> Option<&Arc<dyn RecordedAnswers>> {
        self.recorded.get()
    }

    pub(crate) fn script(&self) -> MutexGuard<'_, Script> {
        // A panic while holding the lock cannot leave the script half-updated (every update
        // is one push or pop), so a poisoned lock is still usable.
        self.script.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes that request `seq`'s stream sent its first output `ms` after the request came.
    pub(crate) fn note_first_token(&self, seq: usize, ms: u64) {
        self.first_tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(seq)
            .or_insert(ms);
    }

    /// Records `request` answered by `answer` (recorded answers), numbering it, and wakes
    /// waiters.
    pub(crate) fn record(&self, request: ModelRequest, answer: Answer) -> ModelRequest {
        let (recorded, count) = {
            let mut script = self.script();
            let recorded = script.record(request, answer);
            (recorded, script.requests.len())
        };
        note_request(&recorded);
        self.arrivals.send_replace(count);
        recorded
    }

    /// Records `request` (numbering it), decides its reply, and wakes waiters.
    pub(crate) fn decide(&self, request: ModelRequest) -> (ModelRequest, Option<Reply>) {
        let (recorded, reply, count) = {
            let mut script = self.script();
            let reply = script.decide(request);
            let recorded = script
                .requests
                .last()
                .cloned()
                .expect("decide records the request");
            (recorded, reply, script.requests.len())
        };
        note_request(&recorded);
        self.arrivals.send_replace(count);
        (recorded, reply)
    }
}

/// The run report's model lane: the request and the answer it got.
fn note_request(request: &ModelRequest) {
    use crate::timeline::{Lane, note};
    let kind = match &request.answer {
        Answer::Miss | Answer::UnofferedTool { .. } => format!("request {} miss", request.seq + 1),
        _ => format!("request {}", request.seq + 1),
    };
    note(Lane::Model, &kind, || {
        let answer = match &request.answer {
            Answer::Queue { reply } => format!("queued reply: {reply}"),
            Answer::Rule { index, reply } => format!("rule {}: {reply}", index + 1),
            Answer::Title => "title".to_owned(),
            Answer::Miss => "nothing in the script answered it (HTTP 400)".to_owned(),
            Answer::UnofferedTool { reply, tool } => {
                format!("{reply} calls `{tool}`, which the request does not offer (HTTP 400)")
            }
            Answer::Cassette { interaction } => format!("cassette interaction {}", interaction + 1),
            Answer::Relayed => "relayed to the real model".to_owned(),
        };
        let asked = request.last_user_text.as_deref().unwrap_or("");
        format!(
            "{answer} · asked: {} · tools offered: {}",
            shorten(asked, 200),
            request.tools_offered.len()
        )
    });
}

fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The scenario's scripted model: queue replies, add rules, read what was asked.
/// Cloning is cheap; every clone drives the same server.
#[derive(Clone, Debug)]
pub struct ScriptedModel {
    pub(crate) shared: Arc<Shared>,
}

impl ScriptedModel {
    /// Each request's time to its first output chunk in ms, in request order, as the script
    /// streamed it (`None`: not streamed, or no output).
    pub(crate) fn first_tokens_ms(&self) -> Vec<Option<u64>> {
        let first = self
            .shared
            .first_tokens
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.shared
            .script()
            .requests
            .iter()
            .map(|r| first.get(&r.seq).copied())
            .collect()
    }

    /// Queues `reply` for the next request no rule answers (replies are used in order).
    pub fn reply(&self, reply: Reply) -> &Self {
        self.shared.script().push(reply);
        self
    }

    /// Adds a rule; rules are tried in the order added, before the queue.
    pub fn rule(&self, rule: Rule) -> &Self {
        self.shared.script().add_rule(rule);
        self
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.shared.script().requests.clone()
    }

    /// The requests nothing in the script answered.
    pub fn misses(&self) -> Vec<ModelRequest> {
        self.shared
            .script()
            .requests
            .iter()
            .filter(|r| r.answer == Answer::Miss)
            .cloned()
            .collect()
    }

    /// Compact structural summaries of every request, for evidence.
    pub fn summaries(&self) -> Vec<ModelRequestSummary> {
        self.shared
            .script()
            .requests
            .iter()
            .map(ModelRequest::summary)
            .collect()
    }

    /// How many queued replies have not been used yet.
    pub fn pending(&self) -> usize {
        self.shared.script().pending()
    }

    /// The model name it serves (what OpenCode's config names).
    pub fn model_name(&self) -> &str {
        &self.shared.model_name
    }

    /// The OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`: the address the
    /// scenario's agent reaches the model at.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.reached_addr())
    }

    /// The Ollama base URL, `http://127.0.0.1:<port>`.
    pub fn ollama_url(&self) -> String {
        format!("http://{}", self.reached_addr())
    }

    /// Makes the model's URLs name `port`, a loopback port forwarding to it (a warm
    /// workspace's): what the agent's config names. Set once.
    pub(crate) fn reached_at(&self, port: u16) {
        let _ = self.shared.reached_at.set(port);
    }

    /// The loopback port the agent reaches the model at (its sandbox connects there).
    pub(crate) fn port(&self) -> u16 {
        self.reached_addr().port()
    }

    fn reached_addr(&self) -> SocketAddr {
        match self.shared.reached_at.get() {
            Some(&port) => SocketAddr::new(self.shared.addr.ip(), port),
            None => self.shared.addr,
        }
    }

    /// The recorded answers of type `T` that answer this model's chat requests instead of its
    /// script, made by `make` and installed on first use: a second agent of the scenario gets
    /// the same ones. Panics when answers of another type were installed (a scenario is served
    /// one way).
    pub(crate) fn serve_recorded<T: RecordedAnswers, E>(
        &self,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if self.shared.recorded.get().is_none() {
            let made: Arc<dyn RecordedAnswers> = Arc::new(make()?);
            // Live is used from one task at a time: nothing was installed in between.
            let _ = self.shared.recorded.set(made);
        }
        Ok(self.recorded::<T>().unwrap_or_else(|| {
            panic!(
                "the model server serves other recorded answers than {}",
                std::any::type_name::<T>()
            )
        }))
    }

    /// The recorded answers installed by [`serve_recorded`](Self::serve_recorded), when they
    /// are of type `T`.
    pub(crate) fn recorded<T: RecordedAnswers>(&self) -> Option<Arc<T>> {
        let installed: Arc<dyn Any + Send + Sync> = self.shared.recorded.get()?.clone();
        installed.downcast::<T>().ok()
    }

    /// Waits until at least `count` requests have arrived, with a ceiling of 60 s (scaled by
    /// `LIVE_TIMEOUT_SCALE`); the error lists what did arrive.
    pub async fn wait_for_requests(&self, count: usize) -> Result<(), ModelError> {
        let ceiling = crate::settings::scaled(Duration::from_secs(60));
        let mut arrivals = self.shared.arrivals.subscribe();
        match tokio::time::timeout(ceiling, arrivals.wait_for(|n| *n >= count)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(_)) => Err(ModelError::Stopped {
                what: format!("waiting for {count} model requests"),
            }),
            Err(_) => {
                let seen: Vec<String> =
                    self.requests().iter().map(ModelRequest::one_line).collect();
                Err(ModelError::Timeout {
                    what: format!("{count} model requests"),
                    ceiling,
                    pending: format!("{} arrived: [{}]", seen.len(), seen.join("; ")),
                })
            }
        }
    }
}
