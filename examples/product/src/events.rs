//! The agent's event stream (`GET /event`, server-sent events) as the few events this product
//! acts on. Frames are `data: {"id","type","properties"}`; anything else is [`AgentEvent::Other`].

use std::pin::Pin;

use eventsource_stream::Eventsource;
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::Value;

use crate::error::{ProductError, chain};

/// A permission the agent asks for (`permission.asked`, or an entry of `GET /permission`).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PermissionAsk {
    /// `per_…`: what the reply names.
    pub id: String,
    /// The session that asks.
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// `read`, `edit`, `bash`, `external_directory`, …
    pub permission: String,
    /// What it would touch: paths (relative to the workspace, or absolute) or commands.
    #[serde(default)]
    pub patterns: Vec<String>,
    /// The tool's details (`filepath` for edits and reads).
    #[serde(default)]
    pub metadata: Value,
}

/// One event of the agent, as far as this product cares.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AgentEvent {
    /// `server.connected`: the first frame; everything later is seen.
    Connected,
    /// The session's status changed (`session.status`).
    Status {
        /// The session.
        session_id: String,
        /// `busy`, `retry` or `idle`.
        status: String,
    },
    /// The session went idle (`session.idle`): the product's signal that a turn ended. (The
    /// `session.status` idle before it is not: `session.idle` is what the API documents.)
    Idle {
        /// The session.
        session_id: String,
    },
    /// An assistant message of the session changed (`message.updated`).
    AssistantUpdated {
        /// The session.
        session_id: String,
        /// Whether it is complete.
        completed: bool,
    },
    /// `permission.asked`.
    PermissionAsked(PermissionAsk),
    /// `session.error`.
    SessionError {
        /// The session, when the error belongs to one.
        session_id: Option<String>,
        /// The error's name (`MessageAbortedError`, `APIError`, …).
        name: Option<String>,
    },
    /// Any other type, by name.
    Other(String),
}

impl AgentEvent {
    /// Reads one frame's `data`.
    pub fn parse(data: &str) -> Result<AgentEvent, ProductError> {
        let decode = |cause: String| ProductError::Decode {
            what: "an event of GET /event".into(),
            cause,
        };
        let frame: Value = serde_json::from_str(data).map_err(|e| decode(e.to_string()))?;
        let kind = frame
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| decode("a frame without a string `type`".into()))?;
        let props = frame.get("properties").cloned().unwrap_or(Value::Null);
        let session = |props: &Value| {
            props
                .get("sessionID")
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let in_session = |props: &Value| {
            session(props).ok_or_else(|| decode(format!("`{kind}` without a sessionID")))
        };
        Ok(match kind {
            "server.connected" => AgentEvent::Connected,
            "session.idle" => AgentEvent::Idle {
                session_id: in_session(&props)?,
            },
            "session.status" => AgentEvent::Status {
                session_id: in_session(&props)?,
                status: props
                    .pointer("/status/type")
                    .and_then(Value::as_str)
                    .ok_or_else(|| decode("`session.status` without a status type".into()))?
                    .to_owned(),
            },
            "message.updated" => {
                let info = props.get("info").cloned().unwrap_or(Value::Null);
                if info.get("role").and_then(Value::as_str) == Some("assistant") {
                    AgentEvent::AssistantUpdated {
                        session_id: in_session(&props)?,
                        completed: info
                            .pointer("/time/completed")
                            .is_some_and(|t| !t.is_null()),
                    }
                } else {
                    AgentEvent::Other(kind.to_owned())
                }
            }
            "permission.asked" => AgentEvent::PermissionAsked(
                serde_json::from_value(props)
                    .map_err(|e| decode(format!("permission.asked: {e}")))?,
            ),
            "session.error" => AgentEvent::SessionError {
                session_id: session(&props),
                name: props
                    .pointer("/error/name")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            },
            other => AgentEvent::Other(other.to_owned()),
        })
    }

    /// The session the event belongs to, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            AgentEvent::Status { session_id, .. }
            | AgentEvent::Idle { session_id }
            | AgentEvent::AssistantUpdated { session_id, .. } => Some(session_id),
            AgentEvent::PermissionAsked(ask) => Some(&ask.session_id),
            AgentEvent::SessionError { session_id, .. } => session_id.as_deref(),
            AgentEvent::Connected | AgentEvent::Other(_) => None,
        }
    }
}

type Frames = Pin<Box<dyn Stream<Item = Result<String, String>> + Send>>;

/// A subscription to the agent's events.
pub struct Events {
    frames: Frames,
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Events").finish_non_exhaustive()
    }
}

impl Events {
    /// Events read from an SSE response body.
    pub(crate) fn from_response(response: reqwest::Response) -> Events {
        let frames = response
            .bytes_stream()
            .eventsource()
            .map(|frame| match frame {
                Ok(event) => Ok(event.data),
                Err(e) => Err(chain(&e)),
            });
        Events {
            frames: Box::pin(frames),
        }
    }

    /// The next event; `None` when the stream ended. A transport error ends the stream too
    /// (as `Some(Err)`): the caller reconnects.
    pub async fn next(&mut self) -> Option<Result<AgentEvent, ProductError>> {
        loop {
            let data = match self.frames.next().await? {
                Ok(data) => data,
                Err(cause) => {
                    return Some(Err(ProductError::Transport {
                        what: "reading GET /event".into(),
                        cause,
                    }));
                }
            };
            // Comments and keep-alives carry no data.
            if data.trim().is_empty() {
                continue;
            }
            return Some(AgentEvent::parse(&data));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_events_the_product_acts_on() {
        let ask = r#"{"id":"evt_1","type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_1","permission":"read","patterns":["a.txt"],"metadata":{"filepath":"/w/a.txt"},"always":["*"]}}"#;
        let AgentEvent::PermissionAsked(ask) = AgentEvent::parse(ask).unwrap() else {
            panic!("not an ask");
        };
        assert_eq!(
            (ask.id.as_str(), ask.permission.as_str()),
            ("per_1", "read")
        );
        assert_eq!(
            AgentEvent::parse(
                r#"{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}"#
            )
            .unwrap(),
            AgentEvent::Status {
                session_id: "ses_1".into(),
                status: "busy".into()
            }
        );
        assert_eq!(
            AgentEvent::parse(r#"{"type":"session.idle","properties":{"sessionID":"ses_1"}}"#)
                .unwrap()
                .session_id(),
            Some("ses_1")
        );
        assert_eq!(
            AgentEvent::parse(
                r#"{"type":"message.updated","properties":{"sessionID":"ses_1","info":{"role":"assistant","time":{"created":1,"completed":2}}}}"#
            )
            .unwrap(),
            AgentEvent::AssistantUpdated {
                session_id: "ses_1".into(),
                completed: true
            }
        );
        assert_eq!(
            AgentEvent::parse(r#"{"type":"plugin.added","properties":{}}"#).unwrap(),
            AgentEvent::Other("plugin.added".into())
        );
    }

    #[test]
    fn a_frame_without_a_type_or_session_is_a_decode_error_naming_it() {
        let error = AgentEvent::parse(r#"{"properties":{}}"#).unwrap_err();
        assert!(error.to_string().contains("`type`"), "{error}");
        let error = AgentEvent::parse(r#"{"type":"session.idle","properties":{}}"#).unwrap_err();
        assert!(error.to_string().contains("session.idle"), "{error}");
    }
}
