//! Typed events of `GET /event`. Frames are `data: {"id","type","properties"}`.
//!
//! Decoding policy: a frame that is not a JSON object with a string `type` is a protocol error
//! ([`ClientError::Decode`]); an unknown `type` becomes [`Event::Unknown`]; a known `type` whose
//! `properties` do not have the documented shape is a [`ClientError::Decode`] naming the JSON
//! path, because silently dropping e.g. a malformed `session.idle` would turn into a hang.
//!
//! The `type` names the variant and the `properties` are its content: serde decodes each known
//! variant from its `properties` (see [`Tagged`]). Each `type` is written once, in the table
//! below, which also answers [`Event::type_name`].

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, EnumAccess, IntoDeserializer, VariantAccess, Visitor};
use serde_json::Value;

use super::error::ClientError;
use super::message_error::MessageError;
use super::types::{
    MessageInfo, Part, PermissionRequest, QuestionRequest, SessionInfo, SessionStatus,
};
use crate::redact::Redactor;

/// Declares [`Event`] from `"type" => Variant {…}` rows, so that the serde tag and
/// [`Event::type_name`] are one string. serde's `#[serde(other)]` only takes a unit variant, so
/// the fallback that keeps an unknown event whole, [`Event::Unknown`], is decoded by hand in
/// [`Event::parse`].
macro_rules! events {
    ($($(#[$attr:meta])* $kind:literal => $variant:ident $({$($fields:tt)*})? $(($($tuple:tt)*))?,)*) => {
        /// One event of the server's stream.
        #[derive(Clone, Debug, PartialEq, Deserialize)]
        #[non_exhaustive]
        pub enum Event {
            $($(#[$attr])* #[serde(rename = $kind)] $variant $({$($fields)*})? $(($($tuple)*))?,)*
            /// Any other type (`plugin.added`, `catalog.updated`, …), kept whole.
            #[serde(skip)]
            Unknown {
                /// The `type`.
                kind: String,
                /// The `properties`.
                properties: Value,
            },
        }

        impl Event {
            /// Every `type` decoded into a variant of its own.
            const KNOWN: &[&str] = &[$($kind),*];

            /// The event's `type` as sent (`session.idle`, `plugin.added`, …).
            pub fn type_name(&self) -> &str {
                match self {
                    $(Self::$variant { .. } => $kind,)*
                    Self::Unknown { kind, .. } => kind,
                }
            }
        }
    };
}

events! {
    /// `server.connected`: the first frame of every subscription.
    "server.connected" => ServerConnected,
    /// `server.heartbeat`: about every 10 s.
    "server.heartbeat" => ServerHeartbeat,
    /// `session.created`.
    "session.created" => SessionCreated {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// Its info.
        info: SessionInfo,
    },
    /// `session.updated`.
    "session.updated" => SessionUpdated {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// Its info.
        info: SessionInfo,
    },
    /// `session.status`.
    "session.status" => SessionStatus {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// Its status.
        status: SessionStatus,
    },
    /// `session.idle` (often sent twice per turn).
    "session.idle" => SessionIdle {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
    },
    /// `session.diff`.
    "session.diff" => SessionDiff {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The file diffs, as sent.
        #[serde(default)]
        diff: Value,
    },
    /// `session.error`.
    "session.error" => SessionError {
        /// The session, when the error belongs to one.
        #[serde(rename = "sessionID", default)]
        session_id: Option<String>,
        /// The error.
        #[serde(default)]
        error: Option<MessageError>,
    },
    /// `message.updated`.
    "message.updated" => MessageUpdated {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The message info (no parts).
        info: MessageInfo,
    },
    /// `message.part.updated`: the whole part as it is now.
    "message.part.updated" => MessagePartUpdated {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The part.
        part: Part,
    },
    /// `message.part.delta`: an increment of a part's field (usually `text`).
    "message.part.delta" => MessagePartDelta {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The message.
        #[serde(rename = "messageID")]
        message_id: String,
        /// The part.
        #[serde(rename = "partID")]
        part_id: String,
        /// The field it extends.
        field: String,
        /// The increment.
        delta: String,
    },
    /// `permission.asked`.
    "permission.asked" => PermissionAsked(PermissionRequest),
    /// `permission.replied`.
    "permission.replied" => PermissionReplied {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The request (`per_…`).
        #[serde(rename = "requestID")]
        request_id: String,
        /// `once`, `always` or `reject`.
        #[serde(default)]
        reply: String,
    },
    /// `question.asked`.
    "question.asked" => QuestionAsked(QuestionRequest),
    /// `question.replied`.
    "question.replied" => QuestionReplied {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The request (`que_…`).
        #[serde(rename = "requestID")]
        request_id: String,
        /// The chosen labels, one list per question.
        #[serde(default)]
        answers: Vec<Vec<String>>,
    },
    /// `question.rejected`.
    "question.rejected" => QuestionRejected {
        /// The session.
        #[serde(rename = "sessionID")]
        session_id: String,
        /// The request (`que_…`).
        #[serde(rename = "requestID", default)]
        request_id: String,
    },
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
        let Some(kind) = frame.get("type").and_then(Value::as_str) else {
            return Err(ClientError::decode(
                redactor,
                "event frame",
                "type",
                "missing or not a string",
            ));
        };
        let kind = kind.to_string();
        let properties = match frame {
            Value::Object(mut fields) => fields.remove("properties").unwrap_or(Value::Null),
            _ => Value::Null,
        };
        if !Self::KNOWN.contains(&kind.as_str()) {
            return Ok(Self::Unknown { kind, properties });
        }
        let mut failed_at = None;
        let tagged = Tagged {
            kind: &kind,
            properties,
            failed_at: &mut failed_at,
        };
        Self::deserialize(de::value::EnumAccessDeserializer::new(tagged)).map_err(|e| {
            let path = failed_at.unwrap_or_else(|| ".".to_string());
            let what = format!("`{kind}` event properties");
            ClientError::decode(redactor, &what, &path, &e.to_string())
        })
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

/// A frame as serde's enum: its `type` names the variant and its `properties` are the content.
/// The content is decoded with its own path tracking, so a mismatch names the JSON path inside
/// `properties` (the path lands in `failed_at`).
struct Tagged<'a> {
    kind: &'a str,
    properties: Value,
    failed_at: &'a mut Option<String>,
}

impl<'de> EnumAccess<'de> for Tagged<'_> {
    type Error = serde_json::Error;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, Self), Self::Error> {
        let variant = seed.deserialize(self.kind.into_deserializer())?;
        Ok((variant, self))
    }
}

impl Tagged<'_> {
    fn content<T>(
        self,
        decode: impl FnOnce(
            serde_path_to_error::Deserializer<'_, '_, Value>,
        ) -> Result<T, serde_json::Error>,
    ) -> Result<T, serde_json::Error> {
        let mut track = serde_path_to_error::Track::new();
        let decoded = decode(serde_path_to_error::Deserializer::new(
            self.properties,
            &mut track,
        ));
        if decoded.is_err() {
            *self.failed_at = Some(track.path().to_string());
        }
        decoded
    }
}

impl<'de> VariantAccess<'de> for Tagged<'_> {
    type Error = serde_json::Error;

    /// A variant without content (`server.connected`) ignores what its `properties` hold.
    fn unit_variant(self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<T::Value, Self::Error> {
        self.content(|content| seed.deserialize(content))
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.content(|content| de::Deserializer::deserialize_tuple(content, len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.content(|content| de::Deserializer::deserialize_struct(content, "", fields, visitor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The client's names are OpenCode's: each is in the event table generated from its API.
    #[test]
    fn every_known_type_is_an_opencode_event_type() {
        for kind in Event::KNOWN {
            assert!(
                crate::gates::EventType::parse(kind).is_ok(),
                "`{kind}` is not an OpenCode event type"
            );
        }
    }
}
