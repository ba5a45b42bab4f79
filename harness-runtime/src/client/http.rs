//! The HTTP calls: one typed method per route the harness uses.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::error::{ClientError, decode_str};
use super::prompt::Prompt;
use super::session_memory::SessionMemory;
use super::stream::{EventStream, StreamOptions};
use super::types::{
    Health, MessageWithParts, PermissionReply, PermissionRequest, QuestionRequest, SessionInfo,
    SessionStatus, Todo,
};
use crate::gates::{GatePoint, Gates};
use crate::redact::Redactor;

/// Default ceiling of one ordinary request (before scaling).
pub const DEFAULT_REQUEST_CEILING: Duration = Duration::from_secs(30);

/// A typed client of one OpenCode server. Cheap to clone; clones share their memory.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    directory: Option<String>,
    pub(crate) redactor: Arc<Redactor>,
    gates: Option<Arc<Gates>>,
    request_ceiling: Duration,
    pub(crate) memory: Arc<SessionMemory>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.redactor.redact(&self.base))
            .finish_non_exhaustive()
    }
}

/// The HTTP client of every call to an agent (API requests, readiness polls): loopback only, so
/// a proxy from the environment must never see agent traffic.
pub(crate) fn loopback_http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a reqwest client without TLS always builds")
}

impl Client {
    /// A client of the server at `base_url` (e.g. `http://127.0.0.1:4096`).
    pub fn new(base_url: impl Into<String>, redactor: Arc<Redactor>) -> Self {
        Self {
            http: loopback_http_client(),
            base: base_url.into().trim_end_matches('/').to_string(),
            directory: None,
            redactor,
            gates: None,
            request_ceiling: crate::settings::scaled(DEFAULT_REQUEST_CEILING),
            memory: Arc::default(),
        }
    }

    /// Sends `?directory=` with every request (one server can serve several workspaces).
    pub fn with_directory(mut self, directory: impl AsRef<Path>) -> Self {
        self.directory = Some(directory.as_ref().display().to_string());
        self
    }

    /// Passes the scenario's gates at every gate point.
    pub fn with_gates(mut self, gates: Arc<Gates>) -> Self {
        self.gates = Some(gates);
        self
    }

    /// Sets the ceiling of ordinary requests (default 30 s, scaled).
    pub fn with_request_ceiling(mut self, ceiling: Duration) -> Self {
        self.request_ceiling = ceiling;
        self
    }

    /// The server's base URL.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    /// The redactor every message goes through.
    pub fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    pub(crate) async fn gate(&self, point: GatePoint) {
        if let Some(g) = &self.gates {
            g.pass(point).await;
        }
    }

    fn request(
        &self,
        method: Method,
        path: &str,
        timeout: Option<Duration>,
    ) -> reqwest::RequestBuilder {
        let mut rb = self.http.request(method, format!("{}{}", self.base, path));
        if let Some(dir) = &self.directory {
            rb = rb.query(&[("directory", dir)]);
        }
        if let Some(t) = timeout {
            rb = rb.timeout(t);
        }
        rb
    }

    /// Sends a request and returns the status and body text.
    async fn raw(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<(u16, String), ClientError> {
        let what = format!("{method} {path}");
        let mut rb = self.request(method, path, Some(timeout));
        if let Some(b) = body {
            rb = rb.json(b);
        }
        let resp = rb
            .send()
            .await
            .map_err(|e| self.transport(&what, &e, timeout))?;
        let status = resp.status().as_u16();
        let text = resp
            .text()
            .await
            .map_err(|e| self.transport(&what, &e, timeout))?;
        Ok((status, text))
    }

    fn transport(&self, what: &str, e: &reqwest::Error, timeout: Duration) -> ClientError {
        if e.is_timeout() {
            ClientError::Timeout {
                what: self.redactor.redact(what),
                after: timeout,
                pending: "the server's answer".into(),
            }
        } else {
            // reqwest's Display omits the cause chain, which holds the useful part.
            let mut msg = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                msg.push_str(&format!(": {s}"));
                src = s.source();
            }
            ClientError::transport(&self.redactor, what, &msg)
        }
    }

    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, ClientError> {
        self.call_within(method, path, body, self.request_ceiling)
            .await
    }

    async fn call_within<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        timeout: Duration,
    ) -> Result<T, ClientError> {
        let what = format!("{method} {path}");
        let (status, text) = self.raw(method, path, body, timeout).await?;
        if !(200..300).contains(&status) {
            return Err(ClientError::http(&self.redactor, &what, status, &text));
        }
        decode_str(&self.redactor, &format!("answer of {what}"), &text)
    }

    /// `GET /global/health`.
    pub async fn health(&self) -> Result<Health, ClientError> {
        self.call(Method::GET, "/global/health", None).await
    }

    /// `GET /session/{id}`; passes the `BeforeGetSession` gate first.
    pub async fn get_session(&self, id: &str) -> Result<SessionInfo, ClientError> {
        self.gate(GatePoint::BeforeGetSession).await;
        self.call(Method::GET, &format!("/session/{id}"), None)
            .await
    }

    /// `GET /session`.
    pub async fn list_sessions(&self) -> Result<Vec<SessionInfo>, ClientError> {
        self.call(Method::GET, "/session", None).await
    }

    /// `DELETE /session/{id}`.
    pub async fn delete_session(&self, id: &str) -> Result<bool, ClientError> {
        self.memory.changed(id);
        self.call(Method::DELETE, &format!("/session/{id}"), None)
            .await
    }

    /// `GET /session/{id}/message`. Answers
    /// [`ClientError::MessagesUnavailableAfterStructuredPrompt`] for a session this client sent
    /// a `format` prompt to (OpenCode answers 400 there).
    pub async fn messages(&self, session_id: &str) -> Result<Vec<MessageWithParts>, ClientError> {
        let unavailable = || ClientError::MessagesUnavailableAfterStructuredPrompt {
            session: self.redactor.redact(session_id),
        };
        if self.memory.structured_sent(session_id) {
            return Err(unavailable());
        }
        self.call(Method::GET, &format!("/session/{session_id}/message"), None)
            .await
    }

    /// `POST /session/{id}/prompt_async` (204 at once). Passes `BeforePrompt` before the post and
    /// `PromptDelivered` after it returned.
    pub async fn prompt_async(&self, session_id: &str, prompt: &Prompt) -> Result<(), ClientError> {
        self.gate(GatePoint::BeforePrompt).await;
        self.memory.prompted(session_id, prompt.format.is_some());
        let path = format!("/session/{session_id}/prompt_async");
        let what = format!("POST {path}");
        let (status, text) = self
            .raw(
                Method::POST,
                &path,
                Some(&prompt.body()),
                self.request_ceiling,
            )
            .await?;
        if !(200..300).contains(&status) {
            return Err(ClientError::http(&self.redactor, &what, status, &text));
        }
        self.gate(GatePoint::PromptDelivered).await;
        Ok(())
    }

    /// `POST /session/{id}/message`: answers when the turn ends, so the prompt's ceiling (not
    /// the request timeout) bounds it. Same gates as [`Client::prompt_async`].
    pub async fn prompt_blocking(
        &self,
        session_id: &str,
        prompt: &Prompt,
    ) -> Result<MessageWithParts, ClientError> {
        self.gate(GatePoint::BeforePrompt).await;
        self.memory.prompted(session_id, prompt.format.is_some());
        let path = format!("/session/{session_id}/message");
        let out = self
            .call_within(
                Method::POST,
                &path,
                Some(&prompt.body()),
                prompt.effective_ceiling(),
            )
            .await?;
        self.gate(GatePoint::PromptDelivered).await;
        Ok(out)
    }

    /// `POST /session/{id}/abort` (`true` also when idle). Passes `BeforeAbort` first.
    pub async fn abort(&self, session_id: &str) -> Result<bool, ClientError> {
        self.gate(GatePoint::BeforeAbort).await;
        self.memory.changed(session_id);
        self.call(Method::POST, &format!("/session/{session_id}/abort"), None)
            .await
    }

    /// `GET /session/{id}/todo`: the session's todo list, as its `todowrite` tool left it.
    pub async fn todos(&self, session_id: &str) -> Result<Vec<Todo>, ClientError> {
        self.call(Method::GET, &format!("/session/{session_id}/todo"), None)
            .await
    }

    /// `GET /session/status`: only non-idle sessions are listed.
    pub async fn statuses(&self) -> Result<BTreeMap<String, SessionStatus>, ClientError> {
        self.call(Method::GET, "/session/status", None).await
    }

    /// `GET /permission`: pending permission requests of every session.
    pub async fn permissions(&self) -> Result<Vec<PermissionRequest>, ClientError> {
        self.call(Method::GET, "/permission", None).await
    }

    /// Replies to a permission request: `POST /permission/{id}/reply`, or the older
    /// `POST /session/{sid}/permissions/{id}` when the route itself is missing (a 404 that is
    /// not `PermissionNotFoundError`). Passes `AfterPermissionReply` after a success.
    pub async fn reply_permission(
        &self,
        session_id: &str,
        request_id: &str,
        reply: PermissionReply,
        message: Option<&str>,
    ) -> Result<(), ClientError> {
        self.memory.changed(session_id);
        let mut body = json!({"reply": reply.as_str()});
        if let Some(m) = message {
            body["message"] = json!(m);
        }
        let first: Result<Value, ClientError> = self
            .call(
                Method::POST,
                &format!("/permission/{request_id}/reply"),
                Some(&body),
            )
            .await;
        match first {
            Ok(_) => {}
            Err(e) if e.is_not_found() && e.error_name() != Some("PermissionNotFoundError") => {
                let old = json!({"response": reply.as_str()});
                let path = format!("/session/{session_id}/permissions/{request_id}");
                let _: Value = self
                    .call(Method::POST, &path, Some(&old))
                    .await
                    .map_err(|_| e)?;
            }
            Err(e) => return Err(e),
        }
        self.gate(GatePoint::AfterPermissionReply).await;
        Ok(())
    }

    /// `GET /question`: pending questions of every session.
    pub async fn questions(&self) -> Result<Vec<QuestionRequest>, ClientError> {
        self.call(Method::GET, "/question", None).await
    }

    /// `POST /question/{id}/reply` with one list of labels per question. Passes
    /// `AfterQuestionReply` after a success.
    pub async fn reply_question(
        &self,
        request_id: &str,
        answers: &[Vec<String>],
    ) -> Result<(), ClientError> {
        let body = json!({"answers": answers});
        let _: Value = self
            .call(
                Method::POST,
                &format!("/question/{request_id}/reply"),
                Some(&body),
            )
            .await?;
        self.gate(GatePoint::AfterQuestionReply).await;
        Ok(())
    }

    /// `POST /question/{id}/reject`. Passes `AfterQuestionReply` after a success.
    pub async fn reject_question(&self, request_id: &str) -> Result<(), ClientError> {
        let _: Value = self
            .call(
                Method::POST,
                &format!("/question/{request_id}/reject"),
                None,
            )
            .await?;
        self.gate(GatePoint::AfterQuestionReply).await;
        Ok(())
    }

    /// `GET <path>` as JSON: the shared pool reads what an instance holds (`/pty`, `/lsp`,
    /// `/mcp`) before it hands a warm workspace on.
    pub(crate) async fn get_value(&self, path: &str) -> Result<Value, ClientError> {
        self.call(Method::GET, path, None).await
    }

    /// `POST /tui/show-toast` with `message`: the directory's instance publishes a
    /// `tui.toast.show` event (no TUI needs to listen). The observer's proof that its stream
    /// carries that instance's events.
    pub(crate) async fn show_toast(&self, message: &str) -> Result<bool, ClientError> {
        let toast = json!({"message": message, "variant": "info"});
        self.call(Method::POST, "/tui/show-toast", Some(&toast))
            .await
    }

    /// `POST /instance/dispose`: drops the instance state; the process keeps running.
    pub async fn dispose(&self) -> Result<bool, ClientError> {
        self.call(Method::POST, "/instance/dispose", None).await
    }

    /// Subscribes to `GET /event` and waits for `server.connected`: every later event is seen.
    pub async fn subscribe(&self) -> Result<EventStream, ClientError> {
        self.subscribe_with(StreamOptions::default()).await
    }

    /// [`Client::subscribe`] with explicit bounds.
    pub async fn subscribe_with(&self, options: StreamOptions) -> Result<EventStream, ClientError> {
        let what = "GET /event";
        // No overall timeout: the body lives as long as the subscription; the watchdog bounds it.
        let resp = tokio::time::timeout(
            self.request_ceiling,
            self.request(Method::GET, "/event", None).send(),
        )
        .await
        .map_err(|_| ClientError::Timeout {
            what: what.into(),
            after: self.request_ceiling,
            pending: "the event stream's response headers".into(),
        })?
        .map_err(|e| self.transport(what, &e, self.request_ceiling))?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            let text = resp.text().await.unwrap_or_default();
            return Err(ClientError::http(&self.redactor, what, status, &text));
        }
        let redactor = self.redactor.clone();
        let bytes = futures::StreamExt::map(resp.bytes_stream(), move |r| {
            r.map_err(|e| ClientError::transport(&redactor, "reading GET /event", &e))
        });
        let mut stream = EventStream::from_bytes(bytes, options, self.redactor.clone());
        stream.expect_connected().await?;
        Ok(stream)
    }
}
