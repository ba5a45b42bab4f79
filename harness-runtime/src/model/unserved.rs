//! The answer to a request for a route the scripted model does not serve: a JSON error naming
//! the method, the path and what is served. An empty 404 reads exactly like a wrong base URL.

use axum::http::{Method, StatusCode, Uri};
use axum::response::Response;

use super::wire_error::{self, Kind};

/// Every route served, for the error that names one that is not.
pub(crate) const SERVED: &[&str] = &[
    "POST /v1/chat/completions",
    "POST /v1/responses",
    "POST /v1/messages",
    "POST /v1beta/models/{model}:streamGenerateContent",
    "POST /v1beta/models/{model}:generateContent",
    "GET /v1/models",
    "GET /v1/models/{id}",
    "POST /api/chat",
    "GET /api/tags",
    "POST /api/show",
    "GET /api/ps",
    "GET /api/version",
];

/// A path that is not served: 404.
pub(crate) async fn unknown_route(method: Method, uri: Uri) -> Response {
    answer(StatusCode::NOT_FOUND, "no route", &method, &uri)
}

/// A served path asked with a method it is not served with: 405.
pub(crate) async fn wrong_method(method: Method, uri: Uri) -> Response {
    answer(
        StatusCode::METHOD_NOT_ALLOWED,
        "wrong method for",
        &method,
        &uri,
    )
}

fn answer(status: StatusCode, what: &str, method: &Method, uri: &Uri) -> Response {
    // The path only: a query string is the client's business.
    let path = uri.path();
    let message = format!(
        "scripted model: {what} {method} {path}; it serves {} (check the client's base URL)",
        SERVED.join(", ")
    );
    wire_error::respond(wire_error::api_of(path), status, Kind::InvalidUrl, &message)
}
