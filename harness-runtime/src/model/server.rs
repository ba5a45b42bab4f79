//! The HTTP server: one task per scenario accepting loopback connections, one per connection,
//! all aborted when the guard drops.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body as AxumBody;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, get, post};
use axum::{Extension, Json, Router};
use bytes::Bytes;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::{AbortHandle, JoinSet};
use tower::Service;

use super::error::ModelError;
use super::frames;
use super::recorded_answers::{ChatRequest, Log};
use super::recording::{Answer, Api, ModelRequest};
use super::reply::{Body, MidStreamEnd, Reply};
use super::reset::{ResetConnection, reset_now};
use super::scripted_model::{ScriptedModel, Shared};
use super::wire_error::{self, Kind};
use super::{anthropic, catalog, gemini, ollama, openai, responses, unserved};

/// The body of the answer to a request nothing in the script answers.
pub(crate) const MISS_MESSAGE: &str = "scripted model: no reply queued for this request; queue one with live.model().reply(..) or add a rule";

/// Stops the server (and every connection, including held ones) when dropped.
#[derive(Debug)]
pub(crate) struct ServerGuard {
    task: AbortHandle,
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        // Aborting the accept task drops its JoinSet, which aborts every connection task.
        self.task.abort();
    }
}

/// Binds 127.0.0.1:0 and serves on the current tokio runtime.
pub(crate) fn start(model_name: &str) -> Result<(ScriptedModel, ServerGuard), ModelError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| ModelError::NoRuntime)?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(ModelError::Bind)?;
    listener.set_nonblocking(true).map_err(ModelError::Bind)?;
    let addr = listener.local_addr().map_err(ModelError::Bind)?;
    let listener = {
        let _entered = runtime.enter();
        TcpListener::from_std(listener).map_err(ModelError::Bind)?
    };
    let shared = Arc::new(Shared::new(model_name.to_string(), addr));
    let task = runtime.spawn(accept_loop(listener, router(shared.clone())));
    Ok((
        ScriptedModel { shared },
        ServerGuard {
            task: task.abort_handle(),
        },
    ))
}

/// Every route of [`unserved::SERVED`]; anything else answers a JSON error saying so.
fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", chat_route(Api::OpenAi))
        .route("/v1/models", get(catalog::openai_models))
        .route("/v1/models/{id}", get(catalog::openai_model))
        .route("/v1/responses", chat_route(Api::Responses))
        .route("/v1/messages", chat_route(Api::Anthropic))
        .route("/v1beta/models/{model_action}", chat_route(Api::Gemini))
        .route("/api/chat", chat_route(Api::Ollama))
        .route("/api/tags", get(catalog::ollama_tags))
        .route("/api/show", post(catalog::ollama_show))
        .route("/api/ps", get(catalog::ollama_ps))
        .route("/api/version", get(catalog::ollama_version))
        // After the routes: it applies to the routes added before it.
        .method_not_allowed_fallback(unserved::wrong_method)
        .fallback(unserved::unknown_route)
        .with_state(shared)
}

async fn accept_loop(listener: TcpListener, router: Router) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(connection(stream, router.clone()));
                }
            }
            // Reap finished connections so the set does not grow for the scenario's life.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn connection(stream: TcpStream, router: Router) {
    // A duplicate of the socket lets us set SO_LINGER=0 (an RST on close) after hyper owns it.
    let Ok((stream, dup)) = duplicate(stream) else {
        return;
    };
    let reset = Arc::new(Notify::new());
    let control = ResetConnection(reset.clone());
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(control.clone());
        let mut router = router.clone();
        async move { router.call(request).await }
    });
    let conn =
        hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        _ = reset.notified() => {
            let _ = socket2::SockRef::from(&dup).set_linger(Some(Duration::ZERO));
        }
    }
}

fn duplicate(stream: TcpStream) -> std::io::Result<(TcpStream, std::net::TcpStream)> {
    let std = stream.into_std()?;
    let dup = std.try_clone()?;
    Ok((TcpStream::from_std(std)?, dup))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// Parses and records a request; its reply, `None` for a script mistake.
fn accept(shared: &Shared, api: Api, path: &str, body: &Bytes) -> (ModelRequest, Option<Reply>) {
    let raw: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    shared.decide(ModelRequest::parse_at(0, api, path, raw))
}

/// The answer to a miss, or to a reply calling a tool the request does not offer: HTTP 400
/// saying so. Not a 5xx: OpenCode retries those with backoff for about 65 s, which would hide
/// a script mistake behind a long wait; a 400 ends the turn at once with an `APIError`, and
/// `finish` fails the scenario.
fn script_mistake(request: &ModelRequest) -> Response {
    let (kind, message) = match &request.answer {
        Answer::UnofferedTool { tool, .. } => (
            Kind::UnofferedTool,
            format!(
                "scripted model: the scripted reply calls tool {tool:?}, which this request does \
                 not offer (offered: {}); script a call of an offered tool",
                request.offered_list()
            ),
        ),
        _ => (Kind::ScriptMiss, MISS_MESSAGE.to_owned()),
    };
    wire_error::respond(request.api, StatusCode::BAD_REQUEST, kind, &message)
}

/// Answers the parts every API shares (holds, HTTP errors, resets, non-stream failures);
/// `None` means: render the reply's stream or completion.
async fn answer_common(
    api: Api,
    reply: &Reply,
    reset: &ResetConnection,
    streamed: bool,
) -> Option<Response> {
    let early = matches!(reply.body, Body::HttpError { .. } | Body::Reset) || !streamed;
    if early && let Some(hold) = &reply.hold {
        hold.wait().await;
    }
    match &reply.body {
        Body::HttpError {
            status,
            body,
            retry_after_ms,
            retry_after_secs,
        } => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut response = (status, Json(body.clone())).into_response();
            if let Some(ms) = retry_after_ms {
                response.headers_mut().insert(
                    header::HeaderName::from_static("retry-after-ms"),
                    header::HeaderValue::from(*ms),
                );
            }
            if let Some(secs) = retry_after_secs {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, header::HeaderValue::from(*secs));
            }
            Some(response)
        }
        Body::Reset => Some(reset_now(reset).await),
        Body::Hang if !streamed => std::future::pending().await,
        Body::MidStream { end, .. } if !streamed => match end {
            MidStreamEnd::Abort => Some(reset_now(reset).await),
            MidStreamEnd::ErrorChunk(message) => Some(wire_error::respond(
                api,
                StatusCode::INTERNAL_SERVER_ERROR,
                Kind::ServerError,
                message,
            )),
        },
        _ => None,
    }
}

/// The streamed answer of `steps` on `api`, noting in `timer`'s model when its first output went out.
fn streaming(
    api: Api,
    content_type: &'static str,
    steps: Vec<frames::Step>,
    reply: &Reply,
    timer: FirstToken,
) -> Response {
    use futures::StreamExt;
    let mut noted = false;
    let body = frames::body(steps, reply.delay).inspect(move |frame| {
        if let (false, Ok(bytes)) = (noted, frame)
            && super::output::frame_carries_output(api, bytes)
        {
            noted = true;
            let ms = u64::try_from(timer.arrived.elapsed().as_millis()).unwrap_or(u64::MAX);
            timer.shared.note_first_token(timer.seq, ms);
        }
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, content_type)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(AxumBody::from_stream(body))
        .expect("static response parts are valid")
}

/// What a scripted stream needs to time its first token: the request's arrival and number.
struct FirstToken {
    shared: Arc<Shared>,
    seq: usize,
    arrived: std::time::Instant,
}

/// What every chat API does first: leave the request to the recorded answers when some were
/// installed, else record it, answer a miss or a reply every API renders alike (holds, HTTP
/// errors, resets), and name the model to echo back.
async fn prepare(
    shared: &Shared,
    api: Api,
    uri: &Uri,
    headers: HeaderMap,
    body: &Bytes,
    reset: &ResetConnection,
) -> Result<(ModelRequest, Reply, String), Response> {
    let path = uri
        .path_and_query()
        .map_or_else(|| uri.path().to_owned(), |p| p.to_string());
    if let Some(recorded) = shared.recorded_answers() {
        // A cassette's answers are the agent's progress too (and relayed live ones: held
        // before the upstream is asked).
        if let Some(scheduler) = shared.scheduler() {
            let raw: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            let title = ModelRequest::parse_at(0, api, &path, raw).is_title_request();
            scheduler.model(title, false).await;
        }
        let log: &Log<'_> = &|request, answer| shared.record(request, answer);
        return Err(recorded
            .answer(ChatRequest::new(
                api,
                path.clone(),
                headers,
                body.clone(),
                log,
                reset,
            ))
            .await);
    }
    let (request, reply) = match accept(shared, api, &path, body) {
        (request, Some(reply)) => (request, reply),
        (request, None) => return Err(script_mistake(&request)),
    };
    // In an exploring run the answer is a step: the agent's progress, ordered by the schedule.
    if let Some(scheduler) = shared.scheduler() {
        let hangs = matches!(reply.body, Body::Hang);
        scheduler.model(request.is_title_request(), hangs).await;
    }
    if let Some(response) = answer_common(api, &reply, reset, request.stream).await {
        return Err(response);
    }
    let model = if request.model.is_empty() {
        shared.model_name.clone()
    } else {
        request.model.clone()
    };
    Ok((request, reply, model))
}

/// A chat request on `api`: recorded, then answered from the script (or the recorded answers),
/// streamed or whole as the client asked, in `api`'s wire format.
async fn chat(
    api: Api,
    shared: Arc<Shared>,
    reset: ResetConnection,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let arrived = std::time::Instant::now();
    let (request, reply, model) = match prepare(&shared, api, &uri, headers, &body, &reset).await {
        Ok(prepared) => prepared,
        Err(response) => return response,
    };
    let meta = openai::Meta {
        seq: request.seq,
        model: &model,
        created: now(),
    };
    if !request.stream {
        return Json(match api {
            Api::OpenAi => openai::completion(&reply, &meta),
            Api::Ollama => ollama::completion(&reply, &model),
            Api::Responses => responses::completion(&reply, &meta),
            Api::Anthropic => anthropic::completion(&reply, &meta),
            Api::Gemini => gemini::completion(&reply, &meta),
        })
        .into_response();
    }
    let (content_type, steps) = match api {
        Api::OpenAi => (
            "text/event-stream",
            openai::stream_steps(&reply, &meta, request.include_usage),
        ),
        Api::Ollama => ("application/x-ndjson", ollama::stream_steps(&reply, &model)),
        Api::Responses => ("text/event-stream", responses::stream_steps(&reply, &meta)),
        Api::Anthropic => ("text/event-stream", anthropic::stream_steps(&reply, &meta)),
        Api::Gemini => ("text/event-stream", gemini::stream_steps(&reply, &meta)),
    };
    let timer = FirstToken {
        shared: Arc::clone(&shared),
        seq: request.seq,
        arrived,
    };
    streaming(api, content_type, steps, &reply, timer)
}

/// The route of `api`'s chat requests, all answered by [`chat`]. Gemini's path is
/// `POST /v1beta/models/<model>:<action>`, which axum captures as one segment: only its two
/// chat actions are served.
fn chat_route(api: Api) -> MethodRouter<Arc<Shared>> {
    post(
        move |State(shared): State<Arc<Shared>>,
              Extension(reset): Extension<ResetConnection>,
              method: Method,
              uri: Uri,
              headers: HeaderMap,
              body: Bytes| async move {
            if api == Api::Gemini {
                let (_, action) = crate::chat_body::gemini_model_and_action(uri.path());
                if !matches!(action, "streamGenerateContent" | "generateContent") {
                    return unserved::unknown_route(method, uri).await;
                }
            }
            chat(api, shared, reset, uri, headers, body).await
        },
    )
}
