//! Serving a cassette: each request gets the first unused recorded interaction whose
//! normalized request equals its own, streamed as recorded (without the recorded pauses: a
//! replayed turn costs what a scripted one does). A request that matches nothing is a miss.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Body as AxumBody;
use axum::http::header;
use axum::response::Response;
use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::Value;

use super::apis::normalize;
use super::command::{display_path, rerecord_command};
use super::error::{CassetteError, Miss};
use super::file::load;
use super::format::{
    Cassette, Chunk, NormalizedRequest, RecordedResponse, StreamEnd, WireApi, chunk_text,
};
use super::matching::{diagnose, find_unused};
use super::scrub::restore_json;
use super::wire::{is_sse, ndjson_line, response_head, sse_event};
use crate::model::frames::{self, Step};
use crate::model::{Answer, ChatRequest, RecordedAnswers};
use crate::redact::Redactor;

/// The body of the answer to a request no recorded interaction matches.
const MISS_MESSAGE: &str = "cassette: no recorded interaction matches this request; the scenario \
                            fails at its end naming the nearest one and how to record it again";

/// A cassette being served.
pub(crate) struct Replay {
    cassette: Cassette,
    path: PathBuf,
    scenario: String,
    /// The scenario's: requests are normalized with a fresh-numbering copy, responses get its
    /// paths back.
    redactor: Arc<Redactor>,
    used: Mutex<Vec<bool>>,
    /// The interactions served, in the order they were, with when (ms since the epoch).
    served: Mutex<Vec<(usize, u64)>>,
    misses: Mutex<Vec<Unmatched>>,
}

impl fmt::Debug for Replay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Replay")
            .field("path", &self.path)
            .field("interactions", &self.cassette.interactions.len())
            .finish_non_exhaustive()
    }
}

/// A request that matched nothing, kept for the report at the scenario's end.
struct Unmatched {
    /// The request as `ModelRequest::one_line` shows it.
    line: String,
    request: Box<NormalizedRequest>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // One assignment or push per update: a poisoned lock still holds consistent data.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Replay {
    /// Serves the cassette at `path`, recorded for `scenario`, redacting with the scenario's
    /// `redactor`.
    pub(crate) fn load(
        path: &Path,
        scenario: &str,
        redactor: &Arc<Redactor>,
    ) -> Result<Self, CassetteError> {
        let cassette = load(path, scenario)?;
        let used = Mutex::new(vec![false; cassette.interactions.len()]);
        Ok(Self {
            cassette,
            path: path.to_path_buf(),
            scenario: scenario.to_owned(),
            redactor: Arc::clone(redactor),
            used,
            served: Mutex::default(),
            misses: Mutex::default(),
        })
    }

    /// The cassette served.
    pub(crate) fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// Which interactions were served, in the order they were, each with when (ms since the
    /// epoch): what a replayed scenario's model requests took when recorded.
    pub(crate) fn served(&self) -> Vec<(usize, u64)> {
        lock(&self.served).clone()
    }

    /// The interaction answering the request body `raw` sent to `path` (marked used), or the request's
    /// normalized form when none does.
    fn take(
        &self,
        api: WireApi,
        path: &str,
        raw: &Value,
    ) -> Result<(usize, &RecordedResponse), Box<NormalizedRequest>> {
        let request = normalize(api, path, raw, &self.redactor.with_fresh_numbering());
        let mut used = lock(&self.used);
        let index = find_unused(&self.cassette.interactions, &used, &request)
            .ok_or_else(|| Box::new(request))?;
        used[index] = true;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| {
                u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
            });
        lock(&self.served).push((index, now));
        Ok((index, &self.cassette.interactions[index].response))
    }

    /// Fails on the requests that matched nothing: each with the nearest recorded request and
    /// the first field that differs, then the command that records the cassette again; every
    /// text redacted with `redactor`.
    pub(crate) fn report(&self, redactor: &Redactor) -> Result<(), CassetteError> {
        let misses = lock(&self.misses);
        if misses.is_empty() {
            return Ok(());
        }
        let error = CassetteError::Misses {
            path: display_path(&self.path),
            misses: misses
                .iter()
                .map(|miss| Miss {
                    request: miss.line.clone(),
                    nearest: diagnose(&self.cassette.interactions, &miss.request),
                })
                .collect(),
            command: rerecord_command(&self.scenario),
        };
        Err(error.redacted(redactor))
    }

    /// Answers with `response` as recorded: its status, headers and body, or its chunks in
    /// order and its end (a broken body, a stream held open, a reset connection).
    async fn respond(&self, response: &RecordedResponse, request: &ChatRequest<'_>) -> Response {
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
                let mut steps: Vec<Step> = replayed_frames(&self.redactor, content_type, chunks)
                    .into_iter()
                    .map(Step::Frame)
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
            RecordedResponse::Dropped { .. } => request.reset().await,
        }
    }
}

/// The bytes of each of `chunks` as a replay sends them, this scenario's paths restored with
/// `redactor`: SSE events with their recorded names, or NDJSON lines, by `content_type`.
pub(super) fn replayed_frames(
    redactor: &Redactor,
    content_type: &str,
    chunks: &[Chunk],
) -> Vec<Bytes> {
    let sse = is_sse(content_type);
    chunks
        .iter()
        .map(|chunk| {
            let text = chunk_text(&restore_json(redactor, &chunk.data));
            if sse {
                sse_event(chunk.event.as_deref(), &text)
            } else {
                ndjson_line(&text)
            }
        })
        .collect()
}

impl RecordedAnswers for Replay {
    /// The first unused interaction whose request equals this one, as recorded; a miss is
    /// logged as one, answered with HTTP 400, and reported at the scenario's end.
    fn answer<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Response> {
        Box::pin(async move {
            let taken = self.take(
                WireApi::from(request.api),
                &request.path_and_query,
                &request.json,
            );
            let answer = match &taken {
                Ok((interaction, _)) => Answer::Cassette {
                    interaction: *interaction,
                },
                Err(_) => Answer::Miss,
            };
            let logged = request.log(answer);
            match taken {
                Ok((_, response)) => self.respond(response, &request).await,
                Err(normalized) => {
                    lock(&self.misses).push(Unmatched {
                        line: logged.one_line(),
                        request: normalized,
                    });
                    request.unanswered(MISS_MESSAGE)
                }
            }
        })
    }
}
