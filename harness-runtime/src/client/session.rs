//! A session handle and whole turns: subscribe, baseline, post, collect until idle.

use std::time::Duration;

use reqwest::Method;
use tokio::time::Instant;

use super::error::{ClientError, truncate};
use super::http::Client;
use super::policy::{Ask, AskAnswer};
use super::prompt::Prompt;
use super::stream::EventStream;
use super::turn::{Feed, Turn, TurnCollector};
use super::types::{CreateSession, MessageWithParts, SessionInfo};
use crate::gates::GatePoint;
use crate::timeline::{self, Lane};

/// Sessions are made through the client; their constructors live with the session type.
impl Client {
    /// `POST /session`: creates a session (give it a title, see [`CreateSession`]).
    pub async fn create_session(&self, request: &CreateSession) -> Result<Session, ClientError> {
        let body = serde_json::to_value(request).expect("CreateSession serializes");
        let info: SessionInfo = self.call(Method::POST, "/session", Some(&body)).await?;
        self.memory.created(&info.id);
        Ok(Session::new(self.clone(), info))
    }

    /// A handle on an existing session (fetched, so an unknown id is a 404 error).
    pub async fn session(&self, id: &str) -> Result<Session, ClientError> {
        let info = self.get_session(id).await?;
        Ok(Session::new(self.clone(), info))
    }
}

/// A handle on one session of one server.
#[derive(Clone, Debug)]
pub struct Session {
    client: Client,
    info: SessionInfo,
}

impl Session {
    pub(crate) fn new(client: Client, info: SessionInfo) -> Self {
        Self { client, info }
    }

    /// The session id (`ses_…`).
    pub fn id(&self) -> &str {
        &self.info.id
    }

    /// The info as last fetched.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Fetches the info again.
    pub async fn refresh(&mut self) -> Result<&SessionInfo, ClientError> {
        self.info = self.client.get_session(&self.info.id).await?;
        Ok(&self.info)
    }

    /// The session's messages (see [`Client::messages`]).
    pub async fn messages(&self) -> Result<Vec<MessageWithParts>, ClientError> {
        self.client.messages(self.id()).await
    }

    /// Aborts the running turn.
    pub async fn abort(&self) -> Result<bool, ClientError> {
        timeline::note(Lane::Turn, "abort posted", || self.id().to_owned());
        let aborted = self.client.abort(self.id()).await;
        timeline::note(Lane::Turn, "abort answered", || format!("{aborted:?}"));
        aborted
    }

    /// Deletes the session.
    pub async fn delete(&self) -> Result<bool, ClientError> {
        self.client.delete_session(self.id()).await
    }

    /// Runs one turn with a text prompt and the default policy (asks left pending).
    pub async fn prompt(&self, text: impl Into<String>) -> Result<Turn, ClientError> {
        self.prompt_with(Prompt::new(text)).await
    }

    /// Runs one turn through the blocking route (`POST /session/{id}/message`). The result has
    /// no event trace; asks cannot be answered by the policy there (nothing is subscribed).
    pub async fn prompt_blocking(&self, prompt: Prompt) -> Result<Turn, ClientError> {
        let answer = self.client.prompt_blocking(self.id(), &prompt).await?;
        let mut turn = Turn::from_messages(self.id(), vec![answer]);
        turn.redactor = Some(self.client.redactor.clone());
        self.client.gate(GatePoint::TurnCollected).await;
        Ok(turn)
    }

    /// Runs one turn: subscribes (waiting for `server.connected`), takes the baseline of
    /// existing message ids (none for a session this client created and has changed nothing in
    /// since: messages another client posted there are not looked for), posts `prompt_async`,
    /// then collects this session's events until the turn is done, answering asks by
    /// `prompt.asks`. Hitting the ceiling is [`ClientError::TurnTimeout`] (an ask left unanswered
    /// past `prompt.ask_ceiling`: [`ClientError::AskUnanswered`]) with what was pending
    /// (collector, `GET /permission`, `GET /question`, `GET /session/status`).
    pub async fn prompt_with(&self, prompt: Prompt) -> Result<Turn, ClientError> {
        let ceiling = prompt.effective_ceiling();
        let deadline = Instant::now() + ceiling;
        // Both only have to be in place before the post; taking them together saves the turn a
        // round trip to the server.
        let (events, baseline) = tokio::join!(self.client.subscribe(), self.baseline());
        let (mut events, baseline) = (events?, baseline?);
        let mut collector = TurnCollector::new(self.id(), baseline);
        self.client.prompt_async(self.id(), &prompt).await?;
        timeline::note(Lane::Turn, "prompt posted", || {
            format!("{}: {}", self.id(), prompt_text(&prompt))
        });
        let result = self
            .collect(&mut events, &mut collector, &prompt, deadline)
            .await;
        timeline::note(Lane::Turn, "turn ended", || match &result {
            Ok(()) => "done".to_owned(),
            Err(e) => e.to_string(),
        });
        self.client
            .memory
            .remember_messages(self.id(), collector.message_ids());
        result?;
        let mut turn = collector.finish();
        turn.redactor = Some(self.client.redactor.clone());
        self.client.gate(GatePoint::TurnCollected).await;
        Ok(turn)
    }

    async fn baseline(&self) -> Result<Vec<String>, ClientError> {
        // A session this client created and has not changed since has no messages; asking
        // would cost the turn a request the server answers on the same thread as the post.
        if self.client.memory.is_fresh(self.id()) {
            return Ok(Vec::new());
        }
        let mut ids: Vec<String> = self
            .client
            .memory
            .known_messages(self.id())
            .into_iter()
            .collect();
        match self.client.messages(self.id()).await {
            Ok(list) => ids.extend(list.into_iter().map(|m| m.info.id)),
            // The remembered ids are the baseline then.
            Err(ClientError::MessagesUnavailableAfterStructuredPrompt { .. }) => {}
            Err(e) => return Err(e),
        }
        Ok(ids)
    }

    async fn collect(
        &self,
        events: &mut EventStream,
        collector: &mut TurnCollector,
        prompt: &Prompt,
        deadline: Instant,
    ) -> Result<(), ClientError> {
        // When the oldest unanswered ask runs out of its ceiling; `None` while none is pending.
        let mut ask_deadline: Option<Instant> = None;
        loop {
            let ask_first = ask_deadline.filter(|at| *at < deadline);
            let wait_until = ask_first.unwrap_or(deadline);
            let next = match tokio::time::timeout_at(wait_until, events.next_event()).await {
                Ok(next) => next,
                Err(_) => {
                    let pending = self.diagnose(collector).await;
                    return Err(match (ask_first, prompt.ask_ceiling) {
                        (Some(_), Some(after)) => ClientError::AskUnanswered { after, pending },
                        _ => ClientError::TurnTimeout {
                            after: prompt.effective_ceiling(),
                            pending,
                        },
                    });
                }
            };
            let event = match next {
                Ok(Some(event)) => event,
                Ok(None) => {
                    return Err(ClientError::StreamEnded {
                        pending: self.client.redactor.redact(&collector.pending()),
                    });
                }
                // A server that dies mid-body breaks the chunked response instead of ending
                // it: for the turn that is the same unknown outcome as an ended stream.
                Err(ClientError::Transport { message, .. }) => {
                    return Err(ClientError::StreamEnded {
                        pending: self.client.redactor.redact(&format!(
                            "{} (the connection broke: {message})",
                            collector.pending()
                        )),
                    });
                }
                Err(ClientError::StreamSilent { after, .. }) => {
                    return Err(ClientError::StreamSilent {
                        after,
                        pending: self.diagnose(collector).await,
                    });
                }
                Err(e) => return Err(e),
            };
            match collector.feed(&event) {
                Feed::Done => return Ok(()),
                Feed::Ask(ask) => {
                    let answer = prompt.asks.decide(&ask);
                    timeline::note_keyed(Lane::Asks, "answered", ask.id(), || {
                        format!("{answer:?}")
                    });
                    self.answer(&ask, &answer).await?;
                    collector.record_answer(ask.id(), answer);
                }
                Feed::Ignored | Feed::Recorded => {}
            }
            ask_deadline = match (collector.has_unanswered_ask(), prompt.ask_ceiling) {
                (true, Some(ceiling)) => ask_deadline.or_else(|| Some(Instant::now() + ceiling)),
                _ => None,
            };
        }
    }

    async fn answer(&self, ask: &Ask, answer: &AskAnswer) -> Result<(), ClientError> {
        match (ask, answer) {
            (_, AskAnswer::LeavePending) => Ok(()),
            (Ask::Permission(p), AskAnswer::Permission(reply)) => {
                self.client
                    .reply_permission(&p.session_id, &p.id, *reply, None)
                    .await
            }
            (Ask::Question(q), AskAnswer::Answers(answers)) => {
                self.client.reply_question(&q.id, answers).await
            }
            (Ask::Question(q), AskAnswer::RejectQuestion) => {
                self.client.reject_question(&q.id).await
            }
            (ask, answer) => Err(ClientError::Usage(self.client.redactor.redact(&format!(
                "the ask policy answered {answer:?} to the {} request {}",
                match ask {
                    Ask::Permission(_) => "permission",
                    Ask::Question(_) => "question",
                },
                ask.id()
            )))),
        }
    }

    /// What was pending, from the collector and the server, redacted.
    async fn diagnose(&self, collector: &TurnCollector) -> String {
        // Short requests: the server may be the reason the turn hung.
        let c = &self
            .client
            .clone()
            .with_request_ceiling(crate::settings::scaled(Duration::from_secs(5)));
        let short = |v: Result<String, ClientError>| match v {
            Ok(s) => truncate(&s, 1500),
            Err(e) => format!("unavailable ({e})"),
        };
        let perms = short(
            c.permissions()
                .await
                .map(|l| serde_json::to_string(&l).unwrap_or_default()),
        );
        let questions = short(
            c.questions()
                .await
                .map(|l| serde_json::to_string(&l).unwrap_or_default()),
        );
        let statuses = short(
            c.statuses()
                .await
                .map(|l| serde_json::to_string(&l).unwrap_or_default()),
        );
        c.redactor.redact(&format!(
            "{}; server: GET /permission {perms}; GET /question {questions}; GET /session/status {statuses}",
            collector.pending()
        ))
    }
}

/// The prompt's text for the run report.
fn prompt_text(prompt: &Prompt) -> String {
    match &prompt.agent {
        Some(agent) => format!("{} (agent {agent})", prompt.text),
        None => prompt.text.clone(),
    }
}
