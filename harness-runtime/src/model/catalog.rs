//! The routes that describe the served model rather than chat with it: OpenAI's `/v1/models`
//! and `/v1/models/{id}`, Ollama's `/api/tags`, `/api/show`, `/api/ps` and `/api/version`.
//! Clients call them before chatting; each answers as the real server does for the one model.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde_json::Value;

use super::recording::Api;
use super::scripted_model::Shared;
use super::wire_error::{self, Kind};
use super::{ollama, openai};

/// `GET /v1/models`.
pub(crate) async fn openai_models(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(openai::models(&shared.model_name))
}

/// `GET /v1/models/{id}`: the served model, or OpenAI's 404 for another.
pub(crate) async fn openai_model(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Response {
    if id == shared.model_name {
        return Json(openai::model(&id)).into_response();
    }
    let message = format!(
        "The model `{id}` does not exist or you do not have access to it; the scripted model \
         serves `{}`",
        shared.model_name
    );
    wire_error::respond(
        Api::OpenAi,
        StatusCode::NOT_FOUND,
        Kind::ModelNotFound,
        &message,
    )
}

/// `GET /api/tags`.
pub(crate) async fn ollama_tags(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(ollama::tags(&shared.model_name))
}

/// `POST /api/show` with `{"model": …}` (older clients send `name`): the served model, or
/// Ollama's 400 and 404.
pub(crate) async fn ollama_show(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let error =
        |status, kind, message: &str| wire_error::respond(Api::Ollama, status, kind, message);
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            Kind::BadRequest,
            "scripted model: the body is not JSON",
        );
    };
    let name = ["model", "name"]
        .iter()
        .find_map(|field| request[field].as_str().filter(|n| !n.is_empty()));
    match name {
        None => error(
            StatusCode::BAD_REQUEST,
            Kind::BadRequest,
            "model is required",
        ),
        Some(name) if ollama::names(name, &shared.model_name) => {
            Json(ollama::show(&shared.model_name)).into_response()
        }
        Some(name) => error(
            StatusCode::NOT_FOUND,
            Kind::ModelNotFound,
            &format!("model '{name}' not found"),
        ),
    }
}

/// `GET /api/ps`.
pub(crate) async fn ollama_ps(State(shared): State<Arc<Shared>>) -> Json<Value> {
    Json(ollama::ps(&shared.model_name))
}

/// `GET /api/version`.
pub(crate) async fn ollama_version() -> Json<Value> {
    Json(ollama::version())
}
