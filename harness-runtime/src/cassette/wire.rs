//! The wire form the relay and the replay share: a response head as recorded, and the bytes of
//! one streamed chunk (an SSE event or an NDJSON line). Both frame alike, so a replayed stream
//! is the relayed one byte for byte.

use std::collections::BTreeMap;

use axum::http::{HeaderName, HeaderValue, StatusCode, header, response::Builder};
use axum::response::Response;
use bytes::Bytes;

use super::format::WireApi;
use crate::model::Api;

impl From<Api> for WireApi {
    /// The chat API a request came in on, as a cassette names it.
    fn from(api: Api) -> Self {
        match api {
            Api::OpenAi => WireApi::OpenAi,
            Api::Ollama => WireApi::Ollama,
            Api::Responses => WireApi::Responses,
            Api::Anthropic => WireApi::Anthropic,
            Api::Gemini => WireApi::Gemini,
        }
    }
}

/// A response head: `status`, `content_type` and `headers` as recorded; parts that are not
/// valid HTTP (a hand edit) are left out.
pub(crate) fn response_head(
    status: u16,
    content_type: &str,
    headers: &BTreeMap<String, String>,
) -> Builder {
    let mut builder =
        Response::builder().status(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY));
    if let Ok(value) = HeaderValue::from_str(content_type) {
        builder = builder.header(header::CONTENT_TYPE, value);
    }
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            builder = builder.header(name, value);
        }
    }
    builder
}

/// One SSE event: `event:` when not the default, one `data:` line per line of `data`.
pub(crate) fn sse_event(event: Option<&str>, data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 16);
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    Bytes::from(out)
}

/// One NDJSON line.
pub(crate) fn ndjson_line(data: &str) -> Bytes {
    let mut out = String::with_capacity(data.len() + 1);
    out.push_str(data);
    out.push('\n');
    Bytes::from(out)
}

/// Whether a response with this content type streams SSE (else, streamed, NDJSON lines).
pub(crate) fn is_sse(content_type: &str) -> bool {
    content_type.starts_with("text/event-stream")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_frame_every_data_line() {
        assert_eq!(sse_event(None, "[DONE]"), "data: [DONE]\n\n");
        assert_eq!(
            sse_event(Some("ping"), "a\nb"),
            "event: ping\ndata: a\ndata: b\n\n"
        );
        assert_eq!(ndjson_line("{}"), "{}\n");
    }
}
