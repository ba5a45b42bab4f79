//! The product's own OpenCode client: plain HTTP calls for the handful of routes it uses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::Method;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::error::{ProductError, chain};
use crate::events::{AgentEvent, Events, PermissionAsk};

/// How the product answers a permission ask (`POST /permission/{requestID}/reply`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reply {
    /// Allow this one call.
    Once,
    /// Refuse it.
    Reject,
}

impl Reply {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Reply::Once => "once",
            Reply::Reject => "reject",
        }
    }
}

/// One message of a session (`GET /session/{id}/message`), kept as the agent sent it.
#[derive(Clone, Debug, serde::Deserialize)]
pub struct Message {
    /// `{id, role, error?, time: {created, completed?}, …}`.
    pub info: Value,
    /// `[{type: "text" | "tool" | …, …}]`.
    #[serde(default)]
    pub parts: Vec<Value>,
}

impl Message {
    /// `user` or `assistant`.
    pub fn role(&self) -> &str {
        self.info.get("role").and_then(Value::as_str).unwrap_or("")
    }

    /// Whether the message is complete (an assistant message gets `time.completed` at its end).
    pub fn is_completed(&self) -> bool {
        self.info
            .pointer("/time/completed")
            .is_some_and(|t| !t.is_null())
    }

    /// The error's name and message, when the message ended with one.
    pub fn error(&self) -> Option<(String, String)> {
        let error = self.info.get("error")?;
        let name = error
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("UnknownError");
        let message = error
            .pointer("/data/message")
            .and_then(Value::as_str)
            .unwrap_or("");
        Some((name.to_owned(), message.to_owned()))
    }

    /// Its text parts, joined.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect()
    }
}

/// A client of one OpenCode server, for one workspace (sent as `?directory=` with every request,
/// so one server can serve several products).
#[derive(Clone, Debug)]
pub struct OpenCode {
    http: reqwest::Client,
    base: String,
    directory: PathBuf,
    request_timeout: Duration,
}

impl OpenCode {
    /// A client of the server at `base_url` (`http://127.0.0.1:4096`) working in `directory`.
    pub fn new(base_url: &str, directory: impl AsRef<Path>) -> Result<OpenCode, ProductError> {
        if !base_url.starts_with("http://") {
            return Err(ProductError::BadUrl {
                url: base_url.to_owned(),
            });
        }
        // The agent is on loopback: a proxy from the environment must not see its traffic.
        let http =
            reqwest::Client::builder()
                .no_proxy()
                .build()
                .map_err(|e| ProductError::Transport {
                    what: "building the http client".into(),
                    cause: chain(&e),
                })?;
        Ok(OpenCode {
            http,
            base: base_url.trim_end_matches('/').to_owned(),
            directory: directory.as_ref().to_path_buf(),
            request_timeout: Duration::from_secs(30),
        })
    }

    /// Sets the ceiling of each ordinary request (default 30 s).
    pub fn with_request_timeout(mut self, timeout: Duration) -> OpenCode {
        self.request_timeout = timeout;
        self
    }

    /// The workspace this client works in.
    pub fn directory(&self) -> &Path {
        &self.directory
    }

    fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http
            .request(method, format!("{}{path}", self.base))
            .query(&[("directory", self.directory.display().to_string())])
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, ProductError> {
        let what = format!("{method} {path}");
        let mut request = self.request(method, path).timeout(self.request_timeout);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let transport = |e: reqwest::Error| ProductError::Transport {
            what: what.clone(),
            cause: chain(&e),
        };
        let response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(transport)?;
        if !(200..300).contains(&status) {
            return Err(ProductError::Status {
                what,
                status,
                body: text.chars().take(300).collect(),
            });
        }
        // 204 and other empty answers read as JSON null.
        let text = if text.trim().is_empty() {
            "null"
        } else {
            &text
        };
        serde_json::from_str(text).map_err(|e| ProductError::Decode {
            what: format!("the answer of {what}"),
            cause: e.to_string(),
        })
    }

    /// `POST /session`; returns the session's id. A title spares the agent a title request.
    pub async fn create_session(&self, title: &str) -> Result<String, ProductError> {
        let session: Value = self
            .call(Method::POST, "/session", Some(json!({"title": title})))
            .await?;
        session
            .get("id")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| ProductError::Decode {
                what: "the answer of POST /session".into(),
                cause: "no session id".into(),
            })
    }

    /// `POST /session/{id}/prompt_async`: the turn runs in the background; its progress comes
    /// as events.
    pub async fn prompt_async(&self, session_id: &str, text: &str) -> Result<(), ProductError> {
        let body = json!({"parts": [{"type": "text", "text": text}]});
        let _: Value = self
            .call(
                Method::POST,
                &format!("/session/{session_id}/prompt_async"),
                Some(body),
            )
            .await?;
        Ok(())
    }

    /// `POST /permission/{requestID}/reply`.
    pub async fn reply(
        &self,
        request_id: &str,
        reply: Reply,
        message: Option<&str>,
    ) -> Result<(), ProductError> {
        let mut body = json!({"reply": reply.as_str()});
        if let Some(message) = message {
            body["message"] = json!(message);
        }
        let _: Value = self
            .call(
                Method::POST,
                &format!("/permission/{request_id}/reply"),
                Some(body),
            )
            .await?;
        Ok(())
    }

    /// `POST /session/{id}/abort`: `true` when accepted (also for an idle session).
    pub async fn abort(&self, session_id: &str) -> Result<bool, ProductError> {
        self.call(Method::POST, &format!("/session/{session_id}/abort"), None)
            .await
    }

    /// `GET /permission`: the asks still waiting for a reply, of every session.
    pub async fn pending_permissions(&self) -> Result<Vec<PermissionAsk>, ProductError> {
        self.call(Method::GET, "/permission", None).await
    }

    /// `GET /session/status`: the sessions that are not idle, with their status.
    pub async fn statuses(&self) -> Result<BTreeMap<String, Value>, ProductError> {
        self.call(Method::GET, "/session/status", None).await
    }

    /// `GET /session/{id}/message`: the session's messages, oldest first.
    pub async fn messages(&self, session_id: &str) -> Result<Vec<Message>, ProductError> {
        self.call(Method::GET, &format!("/session/{session_id}/message"), None)
            .await
    }

    /// `GET /event`, once `server.connected` arrived (within the request timeout): every later
    /// event is seen. Nothing is replayed, so subscribe before acting.
    pub async fn subscribe(&self) -> Result<Events, ProductError> {
        let what = "GET /event";
        let timeout = self.request_timeout;
        let not_connected = || ProductError::Transport {
            what: what.into(),
            cause: format!("no server.connected within {timeout:?}"),
        };
        // No overall timeout on the request: the body lives as long as the subscription.
        let response = tokio::time::timeout(timeout, self.request(Method::GET, "/event").send())
            .await
            .map_err(|_| not_connected())?
            .map_err(|e| ProductError::Transport {
                what: what.into(),
                cause: chain(&e),
            })?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let body = response.text().await.unwrap_or_default();
            return Err(ProductError::Status {
                what: what.into(),
                status,
                body: body.chars().take(300).collect(),
            });
        }
        let mut events = Events::from_response(response);
        match tokio::time::timeout(timeout, events.next()).await {
            Ok(Some(Ok(AgentEvent::Connected))) => Ok(events),
            Ok(Some(Ok(other))) => Err(ProductError::Decode {
                what: what.into(),
                cause: format!("the first event was {other:?}, not server.connected"),
            }),
            Ok(Some(Err(e))) => Err(e),
            Ok(None) => Err(ProductError::Transport {
                what: what.into(),
                cause: "the stream ended before server.connected".into(),
            }),
            Err(_) => Err(not_connected()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls() {
        let error = OpenCode::new("127.0.0.1:4096", "/w").unwrap_err();
        assert!(matches!(error, ProductError::BadUrl { .. }), "{error}");
        assert!(OpenCode::new("http://127.0.0.1:4096/", "/w").is_ok());
    }

    #[test]
    fn a_message_says_its_text_error_and_completion() {
        let message: Message = serde_json::from_value(json!({
            "info": {"role": "assistant", "time": {"created": 1, "completed": 2},
                     "error": {"name": "MessageAbortedError", "data": {"message": "aborted"}}},
            "parts": [{"type": "text", "text": "Hel"}, {"type": "tool"}, {"type": "text", "text": "lo"}],
        }))
        .unwrap();
        assert_eq!(message.role(), "assistant");
        assert!(message.is_completed());
        assert_eq!(message.text(), "Hello");
        assert_eq!(
            message.error(),
            Some(("MessageAbortedError".into(), "aborted".into()))
        );
    }
}
