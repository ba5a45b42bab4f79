//! A typed client of the OpenCode HTTP API, with event streaming and whole-turn collection.
//!
//! - [`Client`]: one typed method per route (health, sessions, messages, prompts, abort,
//!   statuses, permissions, questions, dispose, `/event`).
//! - [`EventStream`]: `GET /event` as typed [`Event`]s, bounded frames, a silence watchdog, no
//!   silent reconnect (see `stream.rs`).
//! - [`Session::prompt_with`]: one whole [`Turn`], assembled by a pure collector, with
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
mod tokens;
pub(crate) mod turn;
mod types;

// Public on purpose: the client is usable on its own (README), so every type its methods take
// or return is nameable. Grouped by what a caller does with it.

// Calling the server.
pub use http::{Client, DEFAULT_REQUEST_CEILING};
pub use session::Session;
// Running a turn and reading it.
pub use policy::{Ask, AskAnswer, AskCallback, AskPolicy, PermissionPolicy, QuestionPolicy};
pub use prompt::{DEFAULT_TURN_CEILING, Prompt};
pub use turn::{AskOutcome, Interaction, ToolCall, Turn, TurnMessage};
// What a message spent (`MessageInfo::tokens`, `MessageInfo::cost`).
pub use tokens::TokenCounts;
// The event stream.
pub use events::Event;
pub use stream::{DEFAULT_MAX_FRAME_BYTES, DEFAULT_SILENCE, EventStream, StreamOptions};
// Errors: the client's own, and those a turn's messages carry.
pub use error::ClientError;
pub use message_error::MessageError;
// OpenCode's JSON shapes, as the routes and events carry them.
pub use types::{
    CreateSession, Health, MessageInfo, MessageTime, MessageWithParts, ModelRef, Part,
    PermissionAction, PermissionReply, PermissionRequest, PermissionRule, QuestionInfo,
    QuestionOption, QuestionRequest, SessionInfo, SessionStatus, Todo, ToolRef, ToolState,
    ToolStatus,
};

pub(crate) use http::loopback_http_client;
