//! The recording relay: each chat request goes to the real provider with the user's
//! credentials, and its response comes back to OpenCode as it arrives (event by event, line by
//! line) while it is put on the tape (redacted when the cassette is written, once each streamed
//! text is whole).
//!
//! A 429 or 5xx answer is asked again first ([`retry`](super::retry)), each retry on the
//! scenario's progress line; what the upstream answered then is relayed. An error the relay gave
//! up retrying goes to OpenCode but not on the tape (it is not the model's answer), unless the
//! scenario asked for upstream errors to be recorded (`Live::record_upstream_errors`): then
//! every answer is relayed and recorded as it came, with no retry.
//!
//! Other upstream failures are relayed as they happened: a non-2xx answer as it is, no
//! connection as a reset connection, a body that breaks as a body that breaks. A stream
//! OpenCode leaves stays on the tape as `client_closed` (its provisional end until the upstream
//! ends it).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::body::Body as AxumBody;
use axum::http::{HeaderMap, header};
use axum::response::Response;
use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt};

use super::apis::normalize;
use super::error::CassetteError;
use super::format::{Interaction, StreamEnd, WireApi, chunk_data};
use super::https;
use super::retry::{self, MAX_RETRIES, Retries};
use super::tape::{Head, Tape};
use super::upstream::{self, Upstream};
use super::wire::{is_sse, ndjson_line, response_head, sse_event};
use crate::model::{Answer, ChatRequest, RecordedAnswers};
use crate::redact::Redactor;

/// How long the relay waits for the upstream to accept a connection. The response itself
/// has no ceiling but the scenario's: a real model may think for minutes.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The response headers a recording keeps: OpenCode's retry timing follows them.
const KEPT_HEADERS: [&str; 2] = ["retry-after", "retry-after-ms"];

/// The headers an error answer also keeps by their prefix: Anthropic's rate-limit state
/// (`anthropic-ratelimit-<limit>-limit/-remaining/-reset`), what its 429 is read by. Not on a
/// success: they change with every request and say nothing of the answer.
const KEPT_ERROR_PREFIXES: [&str; 1] = ["anthropic-ratelimit-"];

/// The request headers OpenCode sends that go upstream as they came: what its provider packages
/// ask features with (`anthropic-beta`: fine-grained tool streaming, interleaved thinking…;
/// `openai-beta`), the API version, who is asking (`user-agent`, OpenRouter's `http-referer` and
/// `x-title`, Google's `x-goog-api-client`). Nothing else: not OpenCode's dummy key
/// (`authorization`, `x-api-key`, `x-goog-api-key`, `api-key`: the relay sends the real one), not
/// hop-by-hop headers, `host` or `content-length` (the relay's own connection's). The relay's
/// key and configured headers replace any of the same name.
pub(crate) const FORWARDED_HEADERS: [&str; 7] = [
    "anthropic-beta",
    "anthropic-version",
    "openai-beta",
    "user-agent",
    "http-referer",
    "x-title",
    "x-goog-api-client",
];

/// A recording in progress.
pub(crate) struct Relay {
    upstream: Upstream,
    client: reqwest::Client,
    /// The scenario's: each request is normalized with a fresh-numbering copy, the tape is
    /// redacted with it when read.
    redactor: Arc<Redactor>,
    tape: Arc<Tape>,
    /// `<topic>::<fn>`: the retries' progress lines are the scenario's.
    scenario: String,
    /// The scenario asked for upstream errors to be relayed and recorded as they came.
    keep_errors: Arc<AtomicBool>,
    /// The requests whose retries were spent: what the scenario's failure says.
    gave_up: Mutex<Vec<GaveUp>>,
    /// What makes this recording wrong (a TLS failure, another API than expected): it is not
    /// written, and the scenario's failure says why.
    problems: Arc<Mutex<Vec<String>>>,
}

/// A request the relay stopped retrying.
#[derive(Clone, Copy, Debug)]
struct GaveUp {
    /// The last answer's.
    status: u16,
    /// Answers of that request that were errors (its retries and the first).
    errors: u32,
}

/// One streamed frame: the SSE event name (when not `message`) and the payload.
type Frame = (Option<String>, String);

impl fmt::Debug for Relay {
    /// The upstream's provider and API only: the rest holds the user's credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relay")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl RecordedAnswers for Relay {
    /// Logs the request as relayed (before the upstream answers: waiters see it arrive), then
    /// forwards it.
    fn answer<'a>(&'a self, request: ChatRequest<'a>) -> BoxFuture<'a, Response> {
        Box::pin(async move {
            request.log(Answer::Relayed);
            self.forward(&request).await
        })
    }
}

impl Relay {
    /// A relay to `upstream` for `scenario`, redacting with its `redactor`; `keep_errors` (the
    /// scenario's, read at each answer) switches retries off.
    pub(crate) fn new(
        upstream: Upstream,
        redactor: &Arc<Redactor>,
        scenario: &str,
        keep_errors: Arc<AtomicBool>,
    ) -> Result<Self, CassetteError> {
        let client = https::client(&upstream.roots, crate::settings::scaled(CONNECT_TIMEOUT))?;
        Ok(Self {
            upstream,
            client,
            redactor: Arc::clone(redactor),
            tape: Arc::default(),
            scenario: scenario.to_owned(),
            keep_errors,
            gave_up: Mutex::default(),
            problems: Arc::default(),
        })
    }

    /// What makes the recording wrong, if anything.
    pub(crate) fn problems(&self) -> Vec<String> {
        self.problems
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn problem(&self, what: String) {
        self.say(&format!("model: {what}"));
        let mut problems = self.problems.lock().unwrap_or_else(|e| e.into_inner());
        if !problems.contains(&what) {
            problems.push(what);
        }
    }

    /// When the relay gave up retrying some request, or found the upstream unusable: which
    /// answers, how often, and what to do.
    pub(crate) fn gave_up(&self) -> Option<String> {
        let problems = self.problems();
        if !problems.is_empty() {
            return Some(problems.join("; "));
        }
        let gave_up = self
            .gave_up
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if gave_up.is_empty() {
            return None;
        }
        let errors: u32 = gave_up.iter().map(|g| g.errors).sum();
        let mut statuses: Vec<u16> = gave_up.iter().map(|g| g.status).collect();
        statuses.dedup();
        let statuses: Vec<String> = statuses.iter().map(u16::to_string).collect();
        let limited = if statuses.iter().all(|s| s == "429") {
            "rate-limited"
        } else {
            "refused"
        };
        Some(format!(
            "the upstream {limited} this scenario {errors} times ({} for {} request(s), each \
             retried up to {MAX_RETRIES} times before its last answer went to OpenCode, \
             unrecorded): lower {} or the provider's load, or set {}=2 to wait longer",
            statuses.join(", "),
            gave_up.len(),
            crate::settings::MODEL_CONCURRENCY,
            crate::settings::TIMEOUT_SCALE,
        ))
    }

    /// A progress line of the scenario: the relay's own words (statuses, counts, waits), not
    /// redacted (a wait would read `[duration]`).
    fn say(&self, line: &str) {
        crate::progress::progress(&self.scenario, line);
    }

    /// Sends `request` upstream, asking again after a 429 or 5xx while the retries allow and the
    /// scenario did not ask for errors as they come. An error given up on is discarded from
    /// the tape (entry `index`).
    async fn send(
        &self,
        request: &ChatRequest<'_>,
        index: usize,
    ) -> reqwest::Result<reqwest::Response> {
        let mut retries = Retries::new();
        loop {
            let response = self
                .client
                .post(self.upstream.url(&request.path_and_query))
                // Then the relay's own: a header of the same name replaces the forwarded one.
                .headers(forwarded(&request.headers))
                .headers(self.upstream.headers.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .body(request.body.clone())
                .send()
                .await?;
            let status = response.status().as_u16();
            if !retry::retryable(status) || self.keep_errors.load(Ordering::Relaxed) {
                return Ok(response);
            }
            // An error body is small, and Gemini names its wait there: read it, and give the
            // answer back whole when it goes to OpenCode.
            let (code, headers) = (response.status(), response.headers().clone());
            let body = response.bytes().await?;
            let response = || {
                let mut rebuilt = axum::http::Response::new(reqwest::Body::from(body.clone()));
                *rebuilt.status_mut() = code;
                *rebuilt.headers_mut() = headers.clone();
                reqwest::Response::from(rebuilt)
            };
            let Some(wait) = retries.next(&headers, &body, SystemTime::now()) else {
                let errors = retries.done + 1;
                self.gave_up
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(GaveUp { status, errors });
                self.tape.discard(index);
                self.say(&format!(
                    "model: upstream answered {status} {errors} time(s); no more retries, \
                     relaying it to OpenCode (not recorded)"
                ));
                return Ok(response());
            };
            self.say(&format!(
                "model: upstream answered {status}, retrying in {} ({} of {MAX_RETRIES})",
                retry::shown(wait),
                retries.done
            ));
            // The retry's backoff (the upstream's `retry-after` or ours): no synchronisation.
            tokio::time::sleep(wait).await;
            self.tape.restart(index);
        }
    }

    /// The real provider.
    pub(crate) fn upstream(&self) -> &Upstream {
        &self.upstream
    }

    /// What was recorded so far, in arrival order, redacted.
    pub(crate) fn interactions(&self) -> Vec<Interaction> {
        self.tape.interactions(&self.redactor)
    }

    /// Forwards `request` to the upstream, and relays the answer.
    async fn forward(&self, request: &ChatRequest<'_>) -> Response {
        let normalized = normalize(
            WireApi::from(request.api),
            &request.path_and_query,
            &request.json,
            &self.redactor.with_fresh_numbering(),
        );
        let index = self.tape.begin(normalized);
        let sent = self.send(request, index).await;
        let response = match sent {
            Ok(response) => response,
            Err(error) => {
                let sent = https::send_error(&self.upstream.url(&request.path_and_query), &error);
                self.tape.dropped(index, detail(&error));
                if sent.tls {
                    // No retry mends an untrusted certificate: the turn ends at once, saying so.
                    self.problem(sent.message.clone());
                    return request.refused(&sent.message);
                }
                return request.reset().await;
            }
        };
        let head = head_of(&response);
        let asked_stream = request
            .json
            .get("stream")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
            || request.path_and_query.contains("alt=sse");
        let api = self.upstream.recorded.api;
        if response.status().is_success()
            && let Some(what) = upstream::answer_mismatch(api, &head.content_type, asked_stream)
        {
            self.problem(what);
        }
        let streamed = response.status().is_success()
            && (is_sse(&head.content_type) || head.content_type.contains("ndjson"));
        if !streamed {
            return match response.bytes().await {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    self.tape.body(index, head.clone(), chunk_data(&text));
                    response_head(head.status, &head.content_type, &head.headers)
                        .body(AxumBody::from(bytes))
                        .expect("response parts are checked")
                }
                Err(error) => {
                    let detail = format!("the body broke: {}", detail(&error));
                    self.tape.dropped(index, detail);
                    request.reset().await
                }
            };
        }
        self.tape.stream(index, head.clone());
        let sse = is_sse(&head.content_type);
        let frames: BoxStream<'static, Result<Frame, ()>> = if sse {
            response
                .bytes_stream()
                .eventsource()
                .map(|event| match event {
                    Ok(event) => Ok((
                        (event.event != "message").then_some(event.event),
                        event.data,
                    )),
                    Err(_) => Err(()),
                })
                .boxed()
        } else {
            ndjson_lines(response.bytes_stream()).boxed()
        };
        let recorder = Recorder {
            tape: Arc::clone(&self.tape),
            index,
            sse,
            check: Some((api, Arc::clone(&self.problems))),
        };
        response_head(head.status, &head.content_type, &head.headers)
            .header(header::CACHE_CONTROL, "no-cache")
            .body(AxumBody::from_stream(relayed(frames, recorder)))
            .expect("response parts are checked")
    }
}

/// The headers of `received` that go upstream: those [`FORWARDED_HEADERS`] names, every value.
fn forwarded(received: &HeaderMap) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for name in FORWARDED_HEADERS {
        for value in received.get_all(name) {
            headers.append(name, value.clone());
        }
    }
    headers
}

/// What went wrong, without the upstream's address (a secret): the innermost cause.
fn detail(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    let what = if error.is_connect() {
        "could not connect"
    } else if error.is_timeout() {
        "timed out"
    } else {
        "the connection failed"
    };
    format!("{what}: {cause}")
}

/// Puts one stream's frames on the tape.
struct Recorder {
    tape: Arc<Tape>,
    index: usize,
    sse: bool,
    /// Until the first frame: the API expected, and where a mismatch goes.
    check: Option<(WireApi, Arc<Mutex<Vec<String>>>)>,
}

impl Recorder {
    /// Records `frame` and returns its bytes for OpenCode.
    fn relay(&mut self, (event, data): Frame) -> Bytes {
        if let Some((api, problems)) = self.check.take()
            && let Some(what) = upstream::frame_mismatch(api, event.as_deref(), &data)
        {
            let mut problems = problems.lock().unwrap_or_else(|e| e.into_inner());
            if !problems.contains(&what) {
                problems.push(what);
            }
        }
        let bytes = if self.sse {
            sse_event(event.as_deref(), &data)
        } else {
            ndjson_line(&data)
        };
        self.tape.chunk(self.index, event, chunk_data(&data));
        bytes
    }
}

/// The body OpenCode receives: each frame as it arrives, recorded on the way; an upstream
/// break breaks this body too. Dropped early (OpenCode went away), the tape keeps the stream's
/// provisional `client_closed` end.
fn relayed(
    frames: BoxStream<'static, Result<Frame, ()>>,
    recorder: Recorder,
) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures::stream::unfold(Some((frames, recorder)), |state| async move {
        let (mut frames, mut recorder) = state?;
        match frames.next().await {
            Some(Ok(frame)) => {
                let bytes = recorder.relay(frame);
                Some((Ok(bytes), Some((frames, recorder))))
            }
            Some(Err(())) => {
                recorder.tape.end(recorder.index, StreamEnd::Dropped);
                // Let hyper flush what was relayed before the break.
                tokio::task::yield_now().await;
                let error = std::io::Error::new(
                    std::io::ErrorKind::ConnectionAborted,
                    "cassette relay: the upstream body broke",
                );
                Some((Err(error), None))
            }
            None => {
                recorder.tape.end(recorder.index, StreamEnd::Complete);
                None
            }
        }
    })
}

/// The NDJSON lines of a body (blank lines skipped; a last line without a newline counts).
fn ndjson_lines(
    bytes: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
) -> impl Stream<Item = Result<Frame, ()>> + Send + 'static {
    let state = (
        Box::pin(bytes),
        Vec::<u8>::new(),
        std::collections::VecDeque::new(),
        false,
    );
    futures::stream::unfold(
        state,
        |(mut bytes, mut buffer, mut lines, mut done)| async move {
            loop {
                if let Some(line) = lines.pop_front() {
                    return Some((Ok((None, line)), (bytes, buffer, lines, done)));
                }
                if done {
                    return None;
                }
                match bytes.next().await {
                    Some(Ok(chunk)) => {
                        buffer.extend_from_slice(&chunk);
                        while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                            let line: Vec<u8> = buffer.drain(..=end).collect();
                            push_line(&mut lines, &line[..end]);
                        }
                    }
                    Some(Err(_)) => {
                        done = true;
                        return Some((Err(()), (bytes, buffer, lines, done)));
                    }
                    None => {
                        done = true;
                        push_line(&mut lines, &std::mem::take(&mut buffer));
                    }
                }
            }
        },
    )
}

fn push_line(lines: &mut std::collections::VecDeque<String>, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches('\r');
    if !text.trim().is_empty() {
        lines.push_back(text.to_owned());
    }
}

/// Whether the header `name` of an answer (a `success` or not) is recorded.
fn kept(name: &str, success: bool) -> bool {
    KEPT_HEADERS.contains(&name)
        || (!success && KEPT_ERROR_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// The recorded head of an upstream response.
fn head_of(response: &reqwest::Response) -> Head {
    let headers = response.headers();
    Head {
        status: response.status().as_u16(),
        content_type: headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned(),
        headers: headers
            .iter()
            .filter(|(name, _)| kept(name.as_str(), response.status().is_success()))
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect::<BTreeMap<_, _>>(),
    }
}

#[cfg(test)]
mod tests {
    use super::kept;

    #[test]
    fn retry_headers_are_kept_and_anthropic_rate_limits_on_errors_only() {
        for success in [true, false] {
            assert!(kept("retry-after", success) && kept("retry-after-ms", success));
            assert!(!kept("x-request-id", success));
        }
        assert!(kept("anthropic-ratelimit-tokens-reset", false));
        assert!(!kept("anthropic-ratelimit-tokens-reset", true));
    }
}
