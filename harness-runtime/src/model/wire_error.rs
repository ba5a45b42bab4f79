//! Errors the scripted model answers itself, each in the shape of the API asked: OpenAI's
//! `{"error":{"message","type","param","code"}}`, Ollama's `{"error":"…"}`. Real clients parse
//! their own API's shape only, so an error in the other one reads as garbage.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::recording::Api;
use super::{ollama, openai};

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
        }
    }
}

/// An error answer with `status` and `message` in `api`'s shape.
pub(crate) fn respond(api: Api, status: StatusCode, kind: Kind, message: &str) -> Response {
    let body = match api {
        Api::OpenAi => {
            let (kind, code) = kind.openai();
            openai::error(message, kind, code)
        }
        Api::Ollama => ollama::error_body(message),
    };
    (status, Json(body)).into_response()
}

/// The API a path belongs to: `/api/…` is Ollama's, anything else OpenAI's.
pub(crate) fn api_of(path: &str) -> Api {
    if path == "/api" || path.starts_with("/api/") {
        Api::Ollama
    } else {
        Api::OpenAi
    }
}
