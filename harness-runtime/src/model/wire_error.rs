//! Errors the scripted model answers itself, each in the shape of the API asked: OpenAI's (chat
//! completions and Responses) `{"error":{"message","type","param","code"}}`, Ollama's
//! `{"error":"…"}`, Anthropic's `{"type":"error","error":{"type","message"}}`, Gemini's
//! `{"error":{"code","message","status"}}`. Real clients parse their own API's shape only, so an
//! error in another one reads as garbage.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::recording::Api;
use super::{anthropic, gemini, ollama, openai};

/// What went wrong, which picks OpenAI's `type` and `code`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// Nothing in the script answers the request.
    ScriptMiss,
    /// The scripted reply calls a tool the request does not offer.
    UnofferedTool,
    /// No recorded interaction of the cassette matches the request.
    CassetteMiss,
    /// A scripted failure answered as one body.
    ServerError,
    /// A route (or a method on it) the scripted model does not serve.
    InvalidUrl,
    /// A model the scripted model does not serve.
    ModelNotFound,
    /// A request body the scripted model cannot read.
    BadRequest,
    /// The real provider cannot be asked at all (its certificate is not trusted).
    UpstreamUnusable,
}

impl Kind {
    /// OpenAI's `type` and `code` for this kind; the ones OpenAI itself sends where it has one.
    fn openai(self) -> (&'static str, Option<&'static str>) {
        match self {
            Self::ScriptMiss => ("scripted_model_miss", Some("scripted_model_miss")),
            Self::UnofferedTool => (
                "scripted_model_unoffered_tool",
                Some("scripted_model_unoffered_tool"),
            ),
            Self::CassetteMiss => ("cassette_miss", Some("cassette_miss")),
            // OpenAI's own server errors carry `code: null`.
            Self::ServerError => ("server_error", None),
            Self::InvalidUrl | Self::BadRequest => ("invalid_request_error", None),
            Self::ModelNotFound => ("invalid_request_error", Some("model_not_found")),
            Self::UpstreamUnusable => ("upstream_unusable", Some("upstream_unusable")),
        }
    }
}

impl Kind {
    /// Anthropic's error `type` for this kind at `status` (its documented types by status).
    fn anthropic(self, status: StatusCode) -> &'static str {
        match (self, status.as_u16()) {
            (Self::InvalidUrl | Self::ModelNotFound, _) | (_, 404) => "not_found_error",
            (_, 429) => "rate_limit_error",
            (_, 529) => "overloaded_error",
            (_, 400..=499) => "invalid_request_error",
            _ => "api_error",
        }
    }
}

/// Gemini's (Google RPC's) status name for an HTTP status.
fn gemini_status(status: StatusCode) -> &'static str {
    match status.as_u16() {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        504 => "DEADLINE_EXCEEDED",
        _ => "INTERNAL",
    }
}

/// An error answer with `status` and `message` in `api`'s shape.
pub(crate) fn respond(api: Api, status: StatusCode, kind: Kind, message: &str) -> Response {
    let body = match api {
        Api::OpenAi | Api::Responses => {
            let (kind, code) = kind.openai();
            openai::error(message, kind, code)
        }
        Api::Ollama => ollama::error_body(message),
        Api::Anthropic => anthropic::error(kind.anthropic(status), message),
        Api::Gemini => gemini::error(status, gemini_status(status), message),
    };
    (status, Json(body)).into_response()
}

/// The API a path belongs to: `/api/…` is Ollama's, `/v1beta/…` Gemini's, `/v1/messages…`
/// Anthropic's, `/v1/responses…` OpenAI Responses', anything else OpenAI chat completions'.
pub(crate) fn api_of(path: &str) -> Api {
    let under = |prefix: &str| {
        path == prefix
            || path
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.starts_with('/'))
    };
    if under("/api") {
        Api::Ollama
    } else if under("/v1beta") {
        Api::Gemini
    } else if under("/v1/messages") {
        Api::Anthropic
    } else if under("/v1/responses") {
        Api::Responses
    } else {
        Api::OpenAi
    }
}
