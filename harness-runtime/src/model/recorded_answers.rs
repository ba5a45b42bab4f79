//! The one thing the model server knows of cassettes: a source of recorded answers it is given.
//!
//! A scenario's chat requests are answered by its script unless a source of recorded answers
//! was installed on its server ([`ScriptedModel::serve_recorded`]): a cassette being replayed,
//! or the real model relayed while it is recorded. `crate::cassette` implements both; this
//! module names neither, so what a cassette is can change without the server knowing.
//!
//! [`ScriptedModel::serve_recorded`]: super::ScriptedModel::serve_recorded

use std::any::Any;
use std::fmt;

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::Value;

use super::recording::{Answer, Api, ModelRequest};
use super::reset::{ResetConnection, reset_now};
use super::wire_error::{self, Kind};

/// Answers a scenario's chat requests in place of its script. `Any` so that whoever installed
/// it gets its own type back ([`ScriptedModel::recorded`](super::ScriptedModel::recorded));
/// `Debug` must show no credential (a relay holds the user's).
pub(crate) trait RecordedAnswers: Any + fmt::Debug + Send + Sync {
    /// The answer to `request`, which it logs ([`ChatRequest::log`]) before answering, so
    /// `live.model().requests()` lists it and waiters see it arrive.
    fn answer<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Response>;
}

/// Logs a request as answered by an `Answer`: numbers it, wakes waiters, returns it as logged.
pub(crate) type Log<'a> = dyn Fn(ModelRequest, Answer) -> ModelRequest + Send + Sync + 'a;

/// A chat request handed to [`RecordedAnswers`], with what answering it takes.
pub(crate) struct ChatRequest<'a> {
    /// The API it came in on.
    pub(crate) api: Api,
    /// The path and query it was sent to (`/v1/chat/completions`; Gemini's names the model and
    /// the streaming mode: `/v1beta/models/<model>:streamGenerateContent?alt=sse`).
    pub(crate) path_and_query: String,
    /// The headers as received (OpenCode's dummy key among them: whoever forwards them picks).
    pub(crate) headers: HeaderMap,
    /// The body as received.
    pub(crate) body: Bytes,
    /// The body as JSON, `null` when it is not.
    pub(crate) json: Value,
    log: &'a Log<'a>,
    reset: &'a ResetConnection,
}

impl<'a> ChatRequest<'a> {
    /// The request (`headers`, `body`) that came in on `api` at `path_and_query`, logged with
    /// `log`, its connection reset through `reset`.
    pub(super) fn new(
        api: Api,
        path_and_query: String,
        headers: HeaderMap,
        body: Bytes,
        log: &'a Log<'a>,
        reset: &'a ResetConnection,
    ) -> Self {
        let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
        Self {
            api,
            path_and_query,
            headers,
            body,
            json,
            log,
            reset,
        }
    }

    /// Adds the request to the model's log as answered by `answer`; the request as logged
    /// (numbered, for messages that name it).
    pub(crate) fn log(&self, answer: Answer) -> ModelRequest {
        (self.log)(
            ModelRequest::parse_at(0, self.api, &self.path_and_query, self.json.clone()),
            answer,
        )
    }

    /// Resets the connection (a TCP RST, no response): never returns.
    pub(crate) async fn reset(&self) -> Response {
        reset_now(self.reset).await
    }

    /// The answer to a request the real provider cannot be asked at all (its TLS cannot be
    /// trusted): HTTP 400 with `message`, so OpenCode ends the turn at once instead of retrying
    /// for a minute what no retry mends.
    pub(crate) fn refused(&self, message: &str) -> Response {
        wire_error::respond(
            self.api,
            StatusCode::BAD_REQUEST,
            Kind::UpstreamUnusable,
            message,
        )
    }

    /// The answer to a request nothing recorded answers: HTTP 400 with `message`, in the shape
    /// of the API asked. A 400, as for a scripted miss: OpenCode ends the turn at once instead
    /// of retrying a 5xx for about a minute.
    pub(crate) fn unanswered(&self, message: &str) -> Response {
        wire_error::respond(
            self.api,
            StatusCode::BAD_REQUEST,
            Kind::CassetteMiss,
            message,
        )
    }
}
