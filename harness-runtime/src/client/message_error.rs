//! Assistant message and session errors: `{name, data}` objects, typed by name.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

/// An assistant message's (or `session.error`'s) error. A known name with an unexpected shape,
/// and any unknown name, is kept whole as [`MessageError::Other`]: decoding never fails on it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum MessageError {
    /// The provider call failed (`APIError`).
    ApiError {
        /// The message.
        message: String,
        /// The provider's HTTP status, when there was one.
        status_code: Option<u64>,
        /// Whether OpenCode considers it retryable.
        is_retryable: bool,
    },
    /// The turn was aborted (`MessageAbortedError`).
    MessageAbortedError {
        /// The message (`Aborted`).
        message: String,
    },
    /// The model did not produce valid structured output (`StructuredOutputError`).
    StructuredOutputError {
        /// The message.
        message: String,
        /// How many retries were made.
        retries: u64,
    },
    /// The provider rejected the credentials (`ProviderAuthError`).
    ProviderAuthError {
        /// The provider.
        provider_id: String,
        /// The message.
        message: String,
    },
    /// The context window was exceeded (`ContextOverflowError`).
    ContextOverflowError {
        /// The message.
        message: String,
    },
    /// The output hit the length limit (`MessageOutputLengthError`).
    MessageOutputLengthError,
    /// OpenCode's catch-all (`UnknownError`).
    UnknownError {
        /// The message.
        message: String,
    },
    /// Any other error, kept whole (`{name, data}` or whatever arrived).
    Other(Value),
}

fn text(data: &Value, key: &str) -> Option<String> {
    data.get(key).and_then(Value::as_str).map(str::to_string)
}

impl MessageError {
    /// Types a `{name, data}` value.
    pub fn from_value(value: Value) -> Self {
        let name = value.get("name").and_then(Value::as_str).unwrap_or("");
        let data = value.get("data").cloned().unwrap_or(Value::Null);
        let message = text(&data, "message");
        let typed = match name {
            "APIError" => message.map(|message| Self::ApiError {
                message,
                status_code: data.get("statusCode").and_then(Value::as_u64),
                is_retryable: data
                    .get("isRetryable")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            }),
            "MessageAbortedError" => Some(Self::MessageAbortedError {
                message: message.unwrap_or_default(),
            }),
            "StructuredOutputError" => message.map(|message| Self::StructuredOutputError {
                message,
                retries: data.get("retries").and_then(Value::as_u64).unwrap_or(0),
            }),
            "ProviderAuthError" => message.map(|message| Self::ProviderAuthError {
                provider_id: text(&data, "providerID").unwrap_or_default(),
                message,
            }),
            "ContextOverflowError" => Some(Self::ContextOverflowError {
                message: message.unwrap_or_default(),
            }),
            "MessageOutputLengthError" => Some(Self::MessageOutputLengthError),
            "UnknownError" => Some(Self::UnknownError {
                message: message.unwrap_or_default(),
            }),
            _ => None,
        };
        typed.unwrap_or(Self::Other(value))
    }

    /// The error's name as OpenCode spells it (`Other` gives its `name` field or `""`).
    pub fn name(&self) -> &str {
        match self {
            Self::ApiError { .. } => "APIError",
            Self::MessageAbortedError { .. } => "MessageAbortedError",
            Self::StructuredOutputError { .. } => "StructuredOutputError",
            Self::ProviderAuthError { .. } => "ProviderAuthError",
            Self::ContextOverflowError { .. } => "ContextOverflowError",
            Self::MessageOutputLengthError => "MessageOutputLengthError",
            Self::UnknownError { .. } => "UnknownError",
            Self::Other(v) => v.get("name").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// The `{name, data}` form (the typed fields only, for a known name).
    pub fn to_value(&self) -> Value {
        match self {
            Self::ApiError {
                message,
                status_code,
                is_retryable,
            } => {
                json!({"name": self.name(), "data": {"message": message, "statusCode": status_code, "isRetryable": is_retryable}})
            }
            Self::MessageAbortedError { message }
            | Self::ContextOverflowError { message }
            | Self::UnknownError { message } => {
                json!({"name": self.name(), "data": {"message": message}})
            }
            Self::StructuredOutputError { message, retries } => {
                json!({"name": self.name(), "data": {"message": message, "retries": retries}})
            }
            Self::ProviderAuthError {
                provider_id,
                message,
            } => {
                json!({"name": self.name(), "data": {"providerID": provider_id, "message": message}})
            }
            Self::MessageOutputLengthError => json!({"name": self.name(), "data": {}}),
            Self::Other(v) => v.clone(),
        }
    }
}

impl<'de> Deserialize<'de> for MessageError {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(Self::from_value)
    }
}

impl Serialize for MessageError {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}
