//! Serving a cassette: each request gets the first unused recorded interaction whose
//! normalized request equals its own, streamed as recorded (without the recorded pauses: a
//! replayed turn costs what a scripted one does). A request that matches nothing is a miss.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body as AxumBody;
use axum::http::header;
use axum::response::Response;
use serde_json::Value;

use super::cassette_wire::{is_sse, ndjson_line, response_head, sse_event};
use super::frames::{self, Step};
use super::reset::{ResetConnection, reset_now};
use crate::cassette::{
    self, Cassette, NormalizedRequest, RecordedResponse, StreamEnd, WireApi, chunk_text,
    restore_json,
};
use crate::redact::Redactor;

/// A cassette being served.
pub(crate) struct Replay {
    cassette: Cassette,
    path: PathBuf,
    scenario: String,
    /// The scenario's: requests are normalized with a fresh-numbering copy, responses get its
    /// paths back.
    redactor: Arc<Redactor>,
    used: Mutex<Vec<bool>>,
    misses: Mutex<Vec<Miss>>,
}

struct Miss {
    /// The request as `ModelRequest::one_line` shows it.
    line: String,
    request: Box<NormalizedRequest>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // One assignment or push per update: a poisoned lock still holds consistent data.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Replay {
    /// Serves `cassette` (read from `path`) for `scenario`.
    pub(crate) fn new(
        cassette: Cassette,
        path: PathBuf,
        scenario: String,
        redactor: Arc<Redactor>,
    ) -> Self {
        let used = Mutex::new(vec![false; cassette.interactions.len()]);
        Self {
            cassette,
            path,
            scenario,
            redactor,
            used,
            misses: Mutex::default(),
        }
    }

    /// The cassette served.
    pub(crate) fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// The interaction answering the request body `raw` (marked used), or the request's
    /// normalized form when none does.
    pub(crate) fn take(
        &self,
        api: WireApi,
        raw: &Value,
    ) -> Result<(usize, &RecordedResponse), Box<NormalizedRequest>> {
        let request = cassette::normalize(api, raw, &self.redactor.with_fresh_numbering());
        let mut used = lock(&self.used);
        let index = cassette::find_unused(&self.cassette.interactions, &used, &request)
            .ok_or_else(|| Box::new(request))?;
        used[index] = true;
        Ok((index, &self.cassette.interactions[index].response))
    }

    /// Notes a request that matched nothing, for [`report`](Self::report).
    pub(crate) fn note_miss(&self, line: String, request: Box<NormalizedRequest>) {
        lock(&self.misses).push(Miss { line, request });
    }

    /// Fails on the requests that matched nothing: each with the nearest recorded request and
    /// the first field that differs, then the command that records the cassette again.
    pub(crate) fn report(&self, redactor: &Redactor) -> Result<(), String> {
        let misses = lock(&self.misses);
        if misses.is_empty() {
            return Ok(());
        }
        let mut message = format!(
            "cassette {}: {} request(s) matched no recorded interaction (answered with HTTP 400):",
            cassette::display_path(&self.path),
            misses.len()
        );
        for miss in misses.iter() {
            message.push_str("\n  - ");
            message.push_str(&miss.line);
            message.push_str("\n    ");
            message.push_str(&cassette::diagnose(
                &self.cassette.interactions,
                &miss.request,
            ));
        }
        message.push_str(&format!(
            "\n  the model traffic changed; record the cassette again with `{}`",
            cassette::rerecord_command(&self.scenario)
        ));
        Err(redactor.redact(&message))
    }

    /// Answers with `response` as recorded: its status, headers and body, or its chunks in
    /// order and its end (a broken body, a stream held open, a reset connection).
    pub(crate) async fn respond(
        &self,
        response: &RecordedResponse,
        reset: &ResetConnection,
    ) -> Response {
        match response {
            RecordedResponse::Body {
                status,
                content_type,
                headers,
                body,
            } => {
                let body = chunk_text(&restore_json(&self.redactor, body));
                response_head(*status, content_type, headers)
                    .body(AxumBody::from(body))
                    .expect("response parts are checked")
            }
            RecordedResponse::Stream {
                status,
                content_type,
                headers,
                chunks,
                end,
            } => {
                let sse = is_sse(content_type);
                let mut steps: Vec<Step> = chunks
                    .iter()
                    .map(|chunk| {
                        let text = chunk_text(&restore_json(&self.redactor, &chunk.data));
                        Step::Frame(if sse {
                            sse_event(chunk.event.as_deref(), &text)
                        } else {
                            ndjson_line(&text)
                        })
                    })
                    .collect();
                match end {
                    StreamEnd::Complete => {}
                    StreamEnd::Dropped => steps.push(Step::Abort),
                    StreamEnd::ClientClosed => steps.push(Step::Hang),
                }
                response_head(*status, content_type, headers)
                    .header(header::CACHE_CONTROL, "no-cache")
                    .body(AxumBody::from_stream(frames::body(steps, None)))
                    .expect("response parts are checked")
            }
            RecordedResponse::Dropped { .. } => reset_now(reset).await,
        }
    }
}
