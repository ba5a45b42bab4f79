//! A typed client of the OpenCode HTTP API, with event streaming and whole-turn collection.
//!
//! - [`Client`]: one typed method per route (health, sessions, messages, prompts, abort,
//!   statuses, permissions, questions, dispose, `/event`).
//! - [`EventStream`]: `GET /event` as typed [`Event`]s, bounded frames, a silence watchdog, no
//!   silent reconnect (see `stream.rs`).
//! - [`Session::prompt_with`]: one whole [`Turn`], assembled by the pure [`TurnCollector`], with
//!   asks answered by an [`AskPolicy`].
//!
//! Every error message passes through the scenario's redactor.

mod error;
mod events;
mod http;
mod message_error;
mod policy;
mod prompt;
mod session;
mod session_memory;
mod stream;
mod turn;
mod types;

pub use error::ClientError;
pub use events::Event;
pub(crate) use http::loopback_http_client;
pub use http::{Client, DEFAULT_REQUEST_TIMEOUT};
pub use message_error::MessageError;
pub use policy::{Ask, AskAnswer, AskCallback, AskPolicy, PermissionPolicy, QuestionPolicy};
pub use prompt::{DEFAULT_TURN_CEILING, Prompt};
pub use session::Session;
pub use stream::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_SILENCE, EventStream, StreamOptions};
pub use turn::{AskOutcome, Feed, Interaction, ToolCall, Turn, TurnCollector, TurnMessage};
pub use types::{
    CreateSession, Health, MessageInfo, MessageTime, MessageWithParts, ModelRef, Part,
    PermissionAction, PermissionReply, PermissionRequest, PermissionRule, QuestionInfo,
    QuestionOption, QuestionRequest, SessionInfo, SessionStatus, ToolRef, ToolState, ToolStatus,
};
