//! Typed events of `GET /event`. Frames are `data: {"id","type","properties"}`.
//!
//! Decoding policy: a frame that is not a JSON object with a string `type` is a protocol error
//! ([`ClientError::Decode`]); an unknown `type` becomes [`Event::Unknown`]; a known `type` whose
//! `properties` do not have the documented shape is a [`ClientError::Decode`] naming the JSON
//! path, because silently dropping e.g. a malformed `session.idle` would turn into a hang.

use serde::Deserialize;
use serde_json::Value;

use super::error::{ClientError, decode_value};
use super::message_error::MessageError;
use super::types::{
    MessageInfo, Part, PermissionRequest, QuestionRequest, SessionInfo, SessionStatus,
};
use crate::redact::Redactor;

/// One event of the server's stream.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Event {
    /// `server.connected`: the first frame of every subscription.
    ServerConnected,
    /// `server.heartbeat`: about every 10 s.
    ServerHeartbeat,
    /// `session.created`.
    SessionCreated {
        /// The session.
        session_id: String,
        /// Its info.
        info: SessionInfo,
    },
    /// `session.updated`.
    SessionUpdated {
        /// The session.
        session_id: String,
        /// Its info.
        info: SessionInfo,
    },
    /// `session.status`.
    SessionStatus {
        /// The session.
        session_id: String,
        /// Its status.
        status: SessionStatus,
    },
    /// `session.idle` (often sent twice per turn).
    SessionIdle {
        /// The session.
        session_id: String,
    },
    /// `session.diff`.
    SessionDiff {
        /// The session.
        session_id: String,
        /// The file diffs, as sent.
        diff: Value,
    },
    /// `session.error`.
    SessionError {
        /// The session, when the error belongs to one.
        session_id: Option<String>,
        /// The error.
        error: Option<MessageError>,
    },
    /// `message.updated`.
    MessageUpdated {
        /// The session.
        session_id: String,
        /// The message info (no parts).
        info: MessageInfo,
    },
    /// `message.part.updated`: the whole part as it is now.
    MessagePartUpdated {
        /// The session.
        session_id: String,
        /// The part.
        part: Part,
    },
    /// `message.part.delta`: an increment of a part's field (usually `text`).
    MessagePartDelta {
        /// The session.
        session_id: String,
        /// The message.
        message_id: String,
        /// The part.
        part_id: String,
        /// The field it extends.
        field: String,
        /// The increment.
        delta: String,
    },
    /// `permission.asked`.
    PermissionAsked(PermissionRequest),
    /// `permission.replied`.
    PermissionReplied {
        /// The session.
        session_id: String,
        /// The request (`per_…`).
        request_id: String,
        /// `once`, `always` or `reject`.
        reply: String,
    },
    /// `question.asked`.
    QuestionAsked(QuestionRequest),
    /// `question.replied`.
    QuestionReplied {
        /// The session.
        session_id: String,
        /// The request (`que_…`).
        request_id: String,
        /// The chosen labels, one list per question.
        answers: Vec<Vec<String>>,
    },
    /// `question.rejected`.
    QuestionRejected {
        /// The session.
        session_id: String,
        /// The request (`que_…`).
        request_id: String,
    },
    /// Any other type (`plugin.added`, `catalog.updated`, …), kept whole.
    Unknown {
        /// The `type`.
        kind: String,
        /// The `properties`.
        properties: Value,
    },
}

#[derive(Deserialize)]
struct Sid {
    #[serde(rename = "sessionID")]
    session_id: String,
}

#[derive(Deserialize)]
struct SessionInfoProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    info: SessionInfo,
}

#[derive(Deserialize)]
struct StatusProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    status: SessionStatus,
}

#[derive(Deserialize)]
struct DiffProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(default)]
    diff: Value,
}

#[derive(Deserialize)]
struct ErrorProps {
    #[serde(rename = "sessionID", default)]
    session_id: Option<String>,
    #[serde(default)]
    error: Option<MessageError>,
}

#[derive(Deserialize)]
struct MessageProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    info: MessageInfo,
}

#[derive(Deserialize)]
struct PartProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    part: Part,
}

#[derive(Deserialize)]
struct DeltaProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "messageID")]
    message_id: String,
    #[serde(rename = "partID")]
    part_id: String,
    field: String,
    delta: String,
}

#[derive(Deserialize)]
struct RepliedProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
    #[serde(default)]
    reply: String,
}

#[derive(Deserialize)]
struct AnsweredProps {
    #[serde(rename = "sessionID")]
    session_id: String,
    #[serde(rename = "requestID")]
    request_id: String,
    #[serde(default)]
    answers: Vec<Vec<String>>,
}

impl Event {
    /// Decodes one frame's `data` (see the module docs for the policy).
    pub fn parse(data: &str, redactor: &Redactor) -> Result<Self, ClientError> {
        let frame: Value = serde_json::from_str(data).map_err(|e| {
            ClientError::decode(
                redactor,
                "event frame",
                ".",
                &format!("{e} in {}", super::error::truncate(data, 200)),
            )
        })?;
        let Some(kind) = frame
            .get("type")
            .and_then(Value::as_str)
            .map(str::to_string)
        else {
            return Err(ClientError::decode(
                redactor,
                "event frame",
                "type",
                "missing or not a string",
            ));
        };
        let props = frame.get("properties").cloned().unwrap_or(Value::Null);
        let what = format!("`{kind}` event properties");
        let r = redactor;
        Ok(match kind.as_str() {
            "server.connected" => Self::ServerConnected,
            "server.heartbeat" => Self::ServerHeartbeat,
            "session.created" | "session.updated" => {
                let p: SessionInfoProps = decode_value(r, &what, props)?;
                if kind == "session.created" {
                    Self::SessionCreated {
                        session_id: p.session_id,
                        info: p.info,
                    }
                } else {
                    Self::SessionUpdated {
                        session_id: p.session_id,
                        info: p.info,
                    }
                }
            }
            "session.status" => {
                let p: StatusProps = decode_value(r, &what, props)?;
                Self::SessionStatus {
                    session_id: p.session_id,
                    status: p.status,
                }
            }
            "session.idle" => {
                let p: Sid = decode_value(r, &what, props)?;
                Self::SessionIdle {
                    session_id: p.session_id,
                }
            }
            "session.diff" => {
                let p: DiffProps = decode_value(r, &what, props)?;
                Self::SessionDiff {
                    session_id: p.session_id,
                    diff: p.diff,
                }
            }
            "session.error" => {
                let p: ErrorProps = decode_value(r, &what, props)?;
                Self::SessionError {
                    session_id: p.session_id,
                    error: p.error,
                }
            }
            "message.updated" => {
                let p: MessageProps = decode_value(r, &what, props)?;
                Self::MessageUpdated {
                    session_id: p.session_id,
                    info: p.info,
                }
            }
            "message.part.updated" => {
                let p: PartProps = decode_value(r, &what, props)?;
                Self::MessagePartUpdated {
                    session_id: p.session_id,
                    part: p.part,
                }
            }
            "message.part.delta" => {
                let p: DeltaProps = decode_value(r, &what, props)?;
                Self::MessagePartDelta {
                    session_id: p.session_id,
                    message_id: p.message_id,
                    part_id: p.part_id,
                    field: p.field,
                    delta: p.delta,
                }
            }
            "permission.asked" => Self::PermissionAsked(decode_value(r, &what, props)?),
            "permission.replied" => {
                let p: RepliedProps = decode_value(r, &what, props)?;
                Self::PermissionReplied {
                    session_id: p.session_id,
                    request_id: p.request_id,
                    reply: p.reply,
                }
            }
            "question.asked" => Self::QuestionAsked(decode_value(r, &what, props)?),
            "question.replied" => {
                let p: AnsweredProps = decode_value(r, &what, props)?;
                Self::QuestionReplied {
                    session_id: p.session_id,
                    request_id: p.request_id,
                    answers: p.answers,
                }
            }
            "question.rejected" => {
                let p: Sid = decode_value(r, &what, props.clone())?;
                let request_id = props
                    .get("requestID")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                Self::QuestionRejected {
                    session_id: p.session_id,
                    request_id,
                }
            }
            _ => Self::Unknown {
                kind,
                properties: props,
            },
        })
    }

    /// The event's `type` as sent (`session.idle`, `plugin.added`, …).
    pub fn type_name(&self) -> &str {
        match self {
            Self::ServerConnected => "server.connected",
            Self::ServerHeartbeat => "server.heartbeat",
            Self::SessionCreated { .. } => "session.created",
            Self::SessionUpdated { .. } => "session.updated",
            Self::SessionStatus { .. } => "session.status",
            Self::SessionIdle { .. } => "session.idle",
            Self::SessionDiff { .. } => "session.diff",
            Self::SessionError { .. } => "session.error",
            Self::MessageUpdated { .. } => "message.updated",
            Self::MessagePartUpdated { .. } => "message.part.updated",
            Self::MessagePartDelta { .. } => "message.part.delta",
            Self::PermissionAsked(_) => "permission.asked",
            Self::PermissionReplied { .. } => "permission.replied",
            Self::QuestionAsked(_) => "question.asked",
            Self::QuestionReplied { .. } => "question.replied",
            Self::QuestionRejected { .. } => "question.rejected",
            Self::Unknown { kind, .. } => kind,
        }
    }

    /// The session the event belongs to, if any.
    pub fn session_id(&self) -> Option<&str> {
        match self {
            Self::ServerConnected | Self::ServerHeartbeat => None,
            Self::SessionCreated { session_id, .. }
            | Self::SessionUpdated { session_id, .. }
            | Self::SessionStatus { session_id, .. }
            | Self::SessionIdle { session_id }
            | Self::SessionDiff { session_id, .. }
            | Self::MessageUpdated { session_id, .. }
            | Self::MessagePartUpdated { session_id, .. }
            | Self::MessagePartDelta { session_id, .. }
            | Self::PermissionReplied { session_id, .. }
            | Self::QuestionReplied { session_id, .. }
            | Self::QuestionRejected { session_id, .. } => Some(session_id),
            Self::SessionError { session_id, .. } => session_id.as_deref(),
            Self::PermissionAsked(p) => Some(&p.session_id),
            Self::QuestionAsked(q) => Some(&q.session_id),
            Self::Unknown { properties, .. } => properties.get("sessionID").and_then(Value::as_str),
        }
    }
}
