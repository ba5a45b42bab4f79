//! The recording in progress: one entry per request, in arrival order, filled in as its
//! response streams, so whatever was relayed is on the tape when the scenario ends.
//!
//! Responses are kept as they came, in memory only, and redacted when the tape is read: a
//! streamed text is redacted as a whole only once all of it is known
//! ([`redact_stream`](super::stream_redaction::redact_stream)). No `Debug`: it holds secrets.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use super::format::{Chunk, Interaction, NormalizedRequest, RecordedResponse, StreamEnd, WireApi};
use super::scrub::redact_json;
use super::stream_redaction::redact_stream;
use crate::redact::Redactor;

/// The interactions recorded so far.
#[derive(Default)]
pub(crate) struct Tape {
    entries: Mutex<Vec<Entry>>,
}

struct Entry {
    /// Normalized (redacted) on arrival.
    request: NormalizedRequest,
    /// As the upstream sent it.
    response: Option<RecordedResponse>,
    /// When the request arrived, or the last chunk was recorded.
    last: Instant,
    /// Left out of the recording: an upstream error the relay gave up retrying.
    discarded: bool,
}

/// The head of a response: status, content type, the headers worth keeping.
#[derive(Clone, Debug)]
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) headers: BTreeMap<String, String>,
}

impl Tape {
    fn entries(&self) -> std::sync::MutexGuard<'_, Vec<Entry>> {
        // Every update is one assignment or push: a poisoned lock holds a consistent tape.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a request's arrival; the index names it in the calls that follow.
    pub(crate) fn begin(&self, request: NormalizedRequest) -> usize {
        let mut entries = self.entries();
        entries.push(Entry {
            request,
            response: None,
            last: Instant::now(),
            discarded: false,
        });
        entries.len() - 1
    }

    /// Request `index` was sent again after a retried answer: its timing starts now, as if it
    /// had arrived now (the wait was the relay's, not the model's).
    pub(crate) fn restart(&self, index: usize) {
        self.entries()[index].last = Instant::now();
    }

    /// Request `index` is left out of the recording: the upstream's answer was an error the
    /// relay gave up retrying, which is not the model's answer.
    pub(crate) fn discard(&self, index: usize) {
        self.entries()[index].discarded = true;
    }

    /// A whole body answered request `index`.
    pub(crate) fn body(&self, index: usize, head: Head, body: Value) {
        self.entries()[index].response = Some(RecordedResponse::Body {
            status: head.status,
            content_type: head.content_type,
            headers: head.headers,
            body,
        });
    }

    /// No response answered request `index`.
    pub(crate) fn dropped(&self, index: usize, detail: String) {
        self.entries()[index].response = Some(RecordedResponse::Dropped { detail });
    }

    /// A stream starts answering request `index`. Until [`end`](Self::end), it reads as closed
    /// by the client (what it is if the scenario ends first).
    pub(crate) fn stream(&self, index: usize, head: Head) {
        self.entries()[index].response = Some(RecordedResponse::Stream {
            status: head.status,
            content_type: head.content_type,
            headers: head.headers,
            chunks: Vec::new(),
            end: StreamEnd::ClientClosed,
        });
    }

    /// One more chunk of request `index`'s stream.
    pub(crate) fn chunk(&self, index: usize, event: Option<String>, data: Value) {
        let mut entries = self.entries();
        let entry = &mut entries[index];
        let now = Instant::now();
        let after_ms =
            u64::try_from(now.duration_since(entry.last).as_millis()).unwrap_or(u64::MAX);
        entry.last = now;
        if let Some(RecordedResponse::Stream { chunks, .. }) = &mut entry.response {
            chunks.push(Chunk {
                after_ms,
                event,
                data,
            });
        }
    }

    /// How request `index`'s stream ended.
    pub(crate) fn end(&self, index: usize, how: StreamEnd) {
        if let Some(RecordedResponse::Stream { end, .. }) = &mut self.entries()[index].response {
            *end = how;
        }
    }

    /// Every interaction so far, in arrival order, redacted with `redactor`'s literals and one
    /// numbering for the whole tape. A request still waiting for its response head reads as
    /// dropped: its client got nothing.
    pub(crate) fn interactions(&self, redactor: &Redactor) -> Vec<Interaction> {
        let ids = redactor.with_fresh_numbering();
        self.entries()
            .iter()
            .filter(|entry| !entry.discarded)
            .map(|entry| Interaction {
                request: entry.request.clone(),
                response: match &entry.response {
                    None => RecordedResponse::Dropped {
                        detail: "no response had arrived when the client went away".into(),
                    },
                    Some(response) => redacted(entry.request.api, response, &ids),
                },
            })
            .collect()
    }
}

/// `response`, an answer on `api`, redacted with `ids`.
fn redacted(api: WireApi, response: &RecordedResponse, ids: &Redactor) -> RecordedResponse {
    match response {
        RecordedResponse::Body {
            status,
            content_type,
            headers,
            body,
        } => RecordedResponse::Body {
            status: *status,
            content_type: content_type.clone(),
            headers: headers.clone(),
            body: redact_json(ids, body),
        },
        RecordedResponse::Stream {
            status,
            content_type,
            headers,
            chunks,
            end,
        } => {
            let data: Vec<Value> = chunks.iter().map(|c| c.data.clone()).collect();
            let chunks = chunks
                .iter()
                .zip(redact_stream(api, ids, &data))
                .map(|(chunk, data)| Chunk {
                    after_ms: chunk.after_ms,
                    event: chunk.event.as_deref().map(|e| ids.redact(e)),
                    data,
                })
                .collect();
            RecordedResponse::Stream {
                status: *status,
                content_type: content_type.clone(),
                headers: headers.clone(),
                chunks,
                end: *end,
            }
        }
        RecordedResponse::Dropped { detail } => RecordedResponse::Dropped {
            detail: ids.redact(detail),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(text: &str) -> NormalizedRequest {
        NormalizedRequest {
            api: WireApi::OpenAi,
            model: "m".into(),
            stream: true,
            tools: vec![],
            tool_choice: None,
            response_format: None,
            roles: vec!["user".into()],
            last_user_text: Some(text.into()),
            tool_results: vec![],
        }
    }

    #[test]
    fn interleaved_responses_keep_arrival_order() {
        let tape = Tape::default();
        let head = Head {
            status: 200,
            content_type: "text/event-stream".into(),
            headers: BTreeMap::new(),
        };
        let first = tape.begin(request("first"));
        let second = tape.begin(request("second"));
        let third = tape.begin(request("third"));
        tape.stream(second, head.clone());
        tape.chunk(second, None, json!({"n": 1}));
        tape.stream(first, head);
        tape.chunk(first, Some("ping".into()), json!("x"));
        tape.end(first, StreamEnd::Complete);
        let interactions = tape.interactions(&Redactor::default());
        let texts: Vec<_> = interactions
            .iter()
            .map(|i| i.request.last_user_text.clone().unwrap())
            .collect();
        assert_eq!(texts, ["first", "second", "third"]);
        assert!(matches!(
            &interactions[0].response,
            RecordedResponse::Stream { end: StreamEnd::Complete, chunks, .. } if chunks[0].event.as_deref() == Some("ping")
        ));
        assert!(matches!(
            &interactions[1].response,
            RecordedResponse::Stream { end: StreamEnd::ClientClosed, chunks, .. } if chunks.len() == 1
        ));
        assert!(matches!(
            interactions[2].response,
            RecordedResponse::Dropped { .. }
        ));
        let _ = third;
    }

    #[test]
    fn a_discarded_request_is_left_out() {
        let tape = Tape::default();
        let head = Head {
            status: 429,
            content_type: "application/json".into(),
            headers: BTreeMap::new(),
        };
        let refused = tape.begin(request("refused"));
        let answered = tape.begin(request("answered"));
        tape.body(refused, head.clone(), json!({}));
        tape.discard(refused);
        tape.restart(answered);
        tape.body(
            answered,
            Head {
                status: 200,
                ..head
            },
            json!({}),
        );
        let interactions = tape.interactions(&Redactor::default());
        assert_eq!(interactions.len(), 1);
        assert_eq!(
            interactions[0].request.last_user_text.as_deref(),
            Some("answered")
        );
    }
}
