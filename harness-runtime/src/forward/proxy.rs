//! The forwarder: a loopback HTTP server that hands every request to the agent's current
//! endpoint and its response back, streaming both ways, passing the scenario's wire gates and
//! faults on the way.

use std::borrow::Cow;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use bytes::Bytes;
use futures::{Stream, StreamExt};
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinSet};

use super::frames::event_type;
use super::wire::{LogSlot, MAX_BODY, Wire};
use crate::gates::Gates;
use crate::redact::Redactor;
use crate::sse::Splitter;
use crate::timeline::{Lane, note};

/// How long the forwarder waits for the agent to accept a connection (loopback: a refusal is
/// immediate; this bounds a server that stopped accepting).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The agent's current port, or why there is none (`"the agent was dropped"`). Looked up for
/// every request: a restart may move the agent to another port.
pub(crate) type Upstream = Arc<dyn Fn() -> Result<u16, &'static str> + Send + Sync>;

/// What a forwarder forwards to, and the scenario it reports to.
pub(crate) struct Target {
    pub(crate) upstream: Upstream,
    /// On a shared server, the agent's workspace: added as `?directory=` to requests that name
    /// none, so the product sees a server of its own.
    pub(crate) directory: Option<std::path::PathBuf>,
    pub(crate) wire: Arc<Wire>,
    pub(crate) gates: Arc<Gates>,
    pub(crate) redactor: Arc<Redactor>,
}

/// A running forwarder on `127.0.0.1:<port>`. Dropping it stops it and every connection through
/// it.
#[derive(Debug)]
pub(crate) struct Forwarder {
    port: u16,
    task: AbortHandle,
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection task.
        self.task.abort();
    }
}

impl Forwarder {
    /// Binds `127.0.0.1:0` and serves on the current tokio runtime. The port is registered with
    /// the scenario's redactor: output naming it reads `127.0.0.1:[port]`.
    pub(crate) fn start(target: Target) -> std::io::Result<Forwarder> {
        let runtime = tokio::runtime::Handle::try_current().map_err(std::io::Error::other)?;
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener)?
        };
        target.redactor.add_port(port);
        let client = reqwest::Client::builder()
            // Loopback only: a proxy from the environment must never see agent traffic.
            .no_proxy()
            .connect_timeout(crate::settings::scaled(CONNECT_TIMEOUT))
            .tcp_nodelay(true)
            .build()
            .map_err(std::io::Error::other)?;
        let directory = target.directory.map(|dir| {
            let encoded: String =
                percent_encoding::utf8_percent_encode(&dir.to_string_lossy(), QUERY_VALUE)
                    .collect();
            format!("directory={encoded}")
        });
        let shared = Arc::new(Shared {
            upstream: target.upstream,
            directory,
            wire: target.wire,
            gates: target.gates,
            redactor: target.redactor,
            client,
        });
        let task = runtime.spawn(accept_loop(listener, shared));
        Ok(Forwarder {
            port,
            task: task.abort_handle(),
        })
    }

    /// Its base URL, `http://127.0.0.1:<port>`.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// What every request of one forwarder shares.
struct Shared {
    upstream: Upstream,
    /// `directory=<workspace, encoded>`, on a shared server.
    directory: Option<String>,
    wire: Arc<Wire>,
    gates: Arc<Gates>,
    redactor: Arc<Redactor>,
    /// One pooled client: connections to the agent are reused across the product's requests.
    client: reqwest::Client,
}

/// A query value: everything but unreserved characters and `/` is percent-encoded.
const QUERY_VALUE: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(connection(stream, shared.clone()));
                }
            }
            // Reap finished connections so the set does not grow for the scenario's life.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn connection(stream: TcpStream, shared: Arc<Shared>) {
    // Frames are small and must not wait for more to come (Nagle's algorithm would hold them).
    let _ = stream.set_nodelay(true);
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(handle(&shared, request).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

/// What the product gets for a request, before its gate.
enum Answer {
    /// The agent's response.
    Agent(reqwest::Response),
    /// A [`Wire::fail_once`] fault's.
    Fault(u16, String),
    /// The agent could not be reached, and why.
    Gone(String),
}

/// One request: logged, gated, faulted or forwarded, its response gated and handed back.
async fn handle(shared: &Arc<Shared>, mut request: Request<Incoming>) -> Response<Body> {
    let method = request.method().clone();
    let uri = request.uri().clone();
    let path = uri.path();
    let route = match crate::gates::route_template(method.as_str(), path) {
        Some(template) => Cow::Borrowed(template),
        None => Cow::Owned(path.to_owned()),
    };
    let slot = shared.wire.begin(method.as_str(), route.clone());
    // An exploring run's decision points come before the gates: a gate holds what the scheduler
    // let go.
    let scheduler = shared.gates.scheduler().cloned();
    let exchange = match &scheduler {
        Some(scheduler) => Some(scheduler.request(method.as_str(), path, &route).await),
        None => None,
    };
    shared.gates.pass_request(method.as_str(), path).await;
    // From here until its answer came (or the product gave the request up), the agent has it to
    // answer: an exploring run's agent has not settled.
    let answering = scheduler
        .as_ref()
        .and_then(|scheduler| scheduler.answering(method.as_str(), &route));
    if let Some(delay) = shared.wire.delay_for(method.as_str(), path) {
        // The scenario's injected wire delay: a fault, not synchronisation.
        tokio::time::sleep(delay).await;
    }
    let upgrade = is_upgrade(request.headers()).then(|| hyper::upgrade::on(&mut request));
    let answer = match shared.wire.take_failure(method.as_str(), path) {
        Some((status, body)) => Answer::Fault(status, body),
        None => match send(shared, request, slot).await {
            Ok(response) => Answer::Agent(response),
            Err(cause) => Answer::Gone(cause),
        },
    };
    drop(answering);
    if let (Some(scheduler), Some(exchange)) = (&scheduler, &exchange) {
        scheduler.response(exchange).await;
    }
    if !matches!(answer, Answer::Gone(_)) {
        shared.gates.pass_response(method.as_str(), path).await;
    }
    let response = match answer {
        Answer::Agent(response) => relay(shared, response, slot, upgrade),
        Answer::Fault(status, body) => {
            if shared.wire.keeps_bodies() {
                shared.wire.response_body(slot, Bytes::from(body.clone()));
            }
            fault_response(status, body)
        }
        Answer::Gone(cause) => {
            let body = bad_gateway_body(&shared.redactor, &cause);
            if shared.wire.keeps_bodies() {
                shared.wire.response_body(slot, Bytes::from(body.clone()));
            }
            bad_gateway(body)
        }
    };
    let status = response.status().as_u16();
    shared.wire.answered(slot, status);
    note(Lane::Wire, "request", || {
        format!("{method} {route} {status}")
    });
    response
}

/// Sends the product's request to the agent; the error is the cause, for the 502.
async fn send(
    shared: &Shared,
    request: Request<Incoming>,
    slot: LogSlot,
) -> Result<reqwest::Response, String> {
    let (parts, body) = request.into_parts();
    let port = (shared.upstream)().map_err(|why| format!("upstream gone: {why}"))?;
    let url = upstream_url(
        port,
        &parts.uri,
        shared.directory.as_deref(),
        &parts.headers,
    );
    let mut outgoing = shared
        .client
        .request(parts.method, &url)
        .headers(forwardable(&parts.headers, is_upgrade(&parts.headers)));
    if has_body(&parts.headers) {
        let stream = Body::new(body).into_data_stream();
        outgoing = outgoing.body(if shared.wire.keeps_bodies() {
            let wire = shared.wire.clone();
            reqwest::Body::wrap_stream(tee(stream, move |kept| wire.request_body(slot, kept)))
        } else {
            reqwest::Body::wrap_stream(stream)
        });
    }
    outgoing.send().await.map_err(|error| {
        format!(
            "upstream http://127.0.0.1:{port} did not answer: {}",
            causes(&error)
        )
    })
}

/// The agent's URL for the product's `uri`: the same path and query, plus the shared agent's
/// directory when the product named none.
fn upstream_url(port: u16, uri: &Uri, directory: Option<&str>, headers: &HeaderMap) -> String {
    let path_and_query = uri.path_and_query().map_or("/", |pq| pq.as_str());
    let mut url = String::with_capacity(24 + path_and_query.len());
    let _ = write!(url, "http://127.0.0.1:{port}{path_and_query}");
    if let Some(directory) = directory {
        let named = uri.query().is_some_and(|query| {
            query
                .split('&')
                .any(|pair| pair.split('=').next() == Some("directory"))
        }) || headers.contains_key("x-opencode-directory");
        if !named {
            url.push(if uri.query().is_some() { '&' } else { '?' });
            url.push_str(directory);
        }
    }
    url
}

/// The agent's response as the product gets it: the same status, headers (hop-by-hop aside) and
/// body, streamed; an event stream frame by frame through the event gates.
fn relay(
    shared: &Arc<Shared>,
    response: reqwest::Response,
    slot: LogSlot,
    upgrade: Option<hyper::upgrade::OnUpgrade>,
) -> Response<Body> {
    let status = response.status();
    let switching = status == StatusCode::SWITCHING_PROTOCOLS;
    let mut relayed = Response::new(Body::empty());
    *relayed.status_mut() = status;
    *relayed.headers_mut() = forwardable(response.headers(), switching);
    if switching {
        if let Some(product) = upgrade {
            tokio::spawn(bridge(product, response));
        }
        return relayed;
    }
    *relayed.body_mut() = if is_event_stream(response.headers()) {
        Body::from_stream(events(shared, response))
    } else if shared.wire.keeps_bodies() {
        let wire = shared.wire.clone();
        Body::from_stream(tee(response.bytes_stream(), move |kept| {
            wire.response_body(slot, kept)
        }))
    } else {
        Body::from_stream(response.bytes_stream())
    };
    relayed
}

/// Joins an upgraded product connection to the agent's (a PTY's websocket), both ways.
async fn bridge(product: hyper::upgrade::OnUpgrade, agent: reqwest::Response) {
    let (Ok(product), Ok(mut agent)) = tokio::join!(product, agent.upgrade()) else {
        return;
    };
    let mut product = TokioIo::new(product);
    let _ = tokio::io::copy_bidirectional(&mut product, &mut agent).await;
}

/// A [`Wire::fail_once`] answer.
fn fault_response(status: u16, body: String) -> Response<Body> {
    let json = serde_json::from_str::<serde::de::IgnoredAny>(&body).is_ok();
    let mut response = Response::new(Body::from(body));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = if json {
        "application/json"
    } else {
        "text/plain; charset=utf-8"
    };
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// The JSON body of a 502: the cause, redacted.
fn bad_gateway_body(redactor: &Redactor, cause: &str) -> String {
    note(Lane::Wire, "upstream gone", || cause.to_owned());
    serde_json::json!({ "error": redactor.redact(&format!("live-forwarder: {cause}")) }).to_string()
}

/// 502 with `body` ([`bad_gateway_body`]).
fn bad_gateway(body: String) -> Response<Body> {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::BAD_GATEWAY;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// An error and its sources, `: `-joined, each said once.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut said = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !said.contains(&text) {
            said.push_str(": ");
            said.push_str(&text);
        }
        source = cause.source();
    }
    said
}

/// Headers that describe one connection, not the message: never forwarded.
const HOP_BY_HOP: [HeaderName; 8] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
];

/// `headers` without the hop-by-hop ones, those `Connection` names, `Host` (the client writes
/// the agent's) and `Expect`. An upgrade keeps `Connection` and `Upgrade`: they are what it asks for.
fn forwardable(headers: &HeaderMap, upgrade: bool) -> HeaderMap {
    let mut kept = headers.clone();
    for value in headers.get_all(header::CONNECTION) {
        for name in value.to_str().unwrap_or_default().split(',') {
            let name = name.trim();
            if !(upgrade && name.eq_ignore_ascii_case("upgrade")) {
                kept.remove(name);
            }
        }
    }
    for name in &HOP_BY_HOP {
        if !(upgrade && name == header::CONNECTION) {
            kept.remove(name);
        }
    }
    if !upgrade {
        kept.remove(header::UPGRADE);
    }
    kept.remove(header::HOST);
    // The forwarder answers a product's `100-continue` itself, by reading the body.
    kept.remove(header::EXPECT);
    kept
}

/// Whether a request carries a body (a length or a transfer coding says so, RFC 9112 §6.3).
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::CONTENT_LENGTH) || headers.contains_key(header::TRANSFER_ENCODING)
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers.contains_key(header::UPGRADE)
        && headers.get_all(header::CONNECTION).iter().any(|value| {
            value
                .to_str()
                .unwrap_or_default()
                .split(',')
                .any(|token| token.trim().eq_ignore_ascii_case("upgrade"))
        })
}

fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.trim_start().starts_with("text/event-stream"))
}

/// `stream` as it is, while the first [`MAX_BODY`] bytes of it are kept and handed to `keep`
/// when it is dropped: the client stops reading a body of known length at its last byte, so its
/// end is not always polled.
fn tee<S, E, F>(stream: S, keep: F) -> Tee<S, F>
where
    S: Stream<Item = Result<Bytes, E>>,
    F: FnOnce(Bytes) + Unpin,
{
    Tee {
        stream: Box::pin(stream),
        kept: Vec::new(),
        keep: Some(keep),
    }
}

struct Tee<S, F: FnOnce(Bytes)> {
    stream: Pin<Box<S>>,
    kept: Vec<u8>,
    keep: Option<F>,
}

impl<S, E, F> Stream for Tee<S, F>
where
    S: Stream<Item = Result<Bytes, E>>,
    F: FnOnce(Bytes) + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let polled = self.stream.as_mut().poll_next(cx);
        if let std::task::Poll::Ready(Some(Ok(bytes))) = &polled {
            let room = MAX_BODY.saturating_sub(self.kept.len());
            let kept = &bytes[..bytes.len().min(room)];
            self.kept.extend_from_slice(kept);
        }
        polled
    }
}

impl<S, F: FnOnce(Bytes)> Drop for Tee<S, F> {
    fn drop(&mut self) {
        if let Some(keep) = self.keep.take() {
            keep(Bytes::from(std::mem::take(&mut self.kept)));
        }
    }
}

/// Why a product's event stream ended as a broken connection.
#[derive(Debug, thiserror::Error)]
enum Broken {
    #[error("the product's event stream was dropped by a wire fault")]
    Dropped,
    #[error("the agent's event stream broke: {0}")]
    Upstream(reqwest::Error),
}

/// An agent's event stream on its way to the product: cut into frames as it arrives, each
/// frame passing its event gate (a held frame holds every later one) and the wire's drop
/// faults before it is written, verbatim.
struct EventPump {
    upstream: Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>,
    splitter: Splitter,
    /// The agent ended the stream; `Some(error)` when it broke.
    ended: Option<Option<reqwest::Error>>,
    wire: Arc<Wire>,
    gates: Arc<Gates>,
    drops: watch::Receiver<u64>,
    /// In an exploring run: the scheduler and this stream's number.
    schedule: Option<(Arc<crate::explore::Scheduler>, u32)>,
}

fn events(
    shared: &Shared,
    response: reqwest::Response,
) -> impl Stream<Item = Result<Bytes, Broken>> + Send + 'static {
    // Subscribed now: drops before this stream opened are not for it.
    let drops = shared.wire.watch_drops();
    let schedule = shared.gates.scheduler().map(|scheduler| {
        let stream = scheduler.open_stream();
        (scheduler.clone(), stream)
    });
    let pump = EventPump {
        upstream: Box::pin(response.bytes_stream()),
        splitter: Splitter::default(),
        ended: None,
        wire: shared.wire.clone(),
        gates: shared.gates.clone(),
        drops,
        schedule,
    };
    futures::stream::unfold(Some(pump), |pump| async move {
        let mut pump = pump?;
        match pump.next().await? {
            Ok(frame) => Some((Ok(frame), Some(pump))),
            // The connection breaks: nothing after an error.
            Err(broken) => Some((Err(broken), None)),
        }
    })
}

/// A dropped stream's end. It lets the connection flush first: what was delivered before the
/// drop reaches the product (as it would have before a real connection broke), nothing after.
async fn dropped() -> Broken {
    tokio::task::yield_now().await;
    Broken::Dropped
}

impl EventPump {
    async fn next(&mut self) -> Option<Result<Bytes, Broken>> {
        loop {
            if let Some(frame) = self.splitter.next_frame() {
                return Some(self.deliver(frame).await);
            }
            if let Some(end) = &mut self.ended {
                // The agent's unterminated tail as it wrote it, then its end.
                if let Some(rest) = self.splitter.rest() {
                    return Some(Ok(rest));
                }
                return end.take().map(|error| Err(Broken::Upstream(error)));
            }
            tokio::select! {
                biased;
                _ = self.drops.changed() => return Some(Err(dropped().await)),
                chunk = self.upstream.next() => match chunk {
                    Some(Ok(bytes)) => self.splitter.push(&bytes),
                    Some(Err(error)) => self.ended = Some(Some(error)),
                    None => self.ended = Some(None),
                },
            }
        }
    }

    /// Passes `frame`'s event gate and the wire's drops, then hands it on.
    async fn deliver(&mut self, frame: Bytes) -> Result<Bytes, Broken> {
        let Some(kind) = event_type(&frame) else {
            return Ok(frame);
        };
        if let Some((scheduler, stream)) = &self.schedule {
            tokio::select! {
                biased;
                _ = self.drops.changed() => return Err(dropped().await),
                () = scheduler.event(*stream, &kind) => {}
            }
        }
        tokio::select! {
            biased;
            _ = self.drops.changed() => return Err(dropped().await),
            () = self.gates.pass_event(&kind) => {}
        }
        if !self.wire.deliver_event(&kind) {
            return Err(dropped().await);
        }
        Ok(frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(k, v)| {
                (
                    HeaderName::from_bytes(k.as_bytes()).unwrap(),
                    HeaderValue::from_str(v).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn hop_by_hop_headers_and_host_stay_behind_everything_else_goes() {
        let incoming = headers(&[
            ("host", "127.0.0.1:1"),
            ("connection", "keep-alive, x-private"),
            ("keep-alive", "timeout=5"),
            ("x-private", "1"),
            ("transfer-encoding", "chunked"),
            ("te", "trailers"),
            ("expect", "100-continue"),
            ("x-opencode-directory", "/w"),
            ("authorization", "Bearer t"),
            ("content-type", "application/json"),
        ]);
        let kept = forwardable(&incoming, false);
        let mut names: Vec<&str> = kept.keys().map(HeaderName::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["authorization", "content-type", "x-opencode-directory"]
        );
        let upgrade = headers(&[
            ("connection", "Upgrade"),
            ("upgrade", "websocket"),
            ("sec-websocket-key", "k"),
        ]);
        assert!(is_upgrade(&upgrade));
        assert_eq!(forwardable(&upgrade, true).len(), 3);
        assert!(!is_upgrade(&headers(&[("upgrade", "websocket")])));
    }

    #[test]
    fn a_shared_agents_directory_is_added_only_where_the_product_named_none() {
        let url = |uri: &str, headers: &HeaderMap| {
            upstream_url(7, &uri.parse().unwrap(), Some("directory=%2Fw"), headers)
        };
        let none = HeaderMap::new();
        assert_eq!(
            url("/session", &none),
            "http://127.0.0.1:7/session?directory=%2Fw"
        );
        assert_eq!(
            url("/session?limit=2", &none),
            "http://127.0.0.1:7/session?limit=2&directory=%2Fw"
        );
        assert_eq!(
            url("/session?directory=/x", &none),
            "http://127.0.0.1:7/session?directory=/x"
        );
        let header = headers(&[("x-opencode-directory", "/x")]);
        assert_eq!(url("/event", &header), "http://127.0.0.1:7/event");
        assert_eq!(
            upstream_url(7, &"/a?b=c".parse().unwrap(), None, &none),
            "http://127.0.0.1:7/a?b=c"
        );
    }
}
