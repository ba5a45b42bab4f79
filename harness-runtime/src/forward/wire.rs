//! The scenario's wire: the faults its forwarders inject and the log of the product's requests.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;
use tokio::sync::watch;

use super::WireError;
use crate::gates::{EventType, RoutePattern};
use crate::redact::Redactor;
use crate::timeline::{Lane, note};

/// A scenario keeps at most this many product requests in its log; the counters count them all.
const MAX_LOGGED: usize = 10_000;

/// A body kept in the log ([`Wire::record_bodies`]) is cut after this many bytes.
pub(crate) const MAX_BODY: usize = 64 * 1024;

/// The event type a stream sends every few seconds: it is delivered and can be gated, but not
/// counted, since how many arrive depends on time, not on what the product did.
const HEARTBEAT: &str = "server.heartbeat";

/// What passes between the scenario's products and its agents: the faults the forwarders inject
/// and the log of the product's requests. One per scenario, shared by the forwarder of every
/// agent; reached with `live.wire()`.
///
/// A product reaches an agent through its forwarder ([`Agent::forwarded_url`]), which forwards
/// every request and response unchanged unless a gate or a fault here says otherwise.
///
/// - **Faults**, for the product's retry and reconnect paths: answer a route once with a status
///   and body ([`fail_once`](Wire::fail_once)), delay a route ([`delay`](Wire::delay)), drop the
///   product's event streams now ([`drop_event_stream_now`](Wire::drop_event_stream_now)) or
///   right before the Nth event of a type ([`drop_event_stream_at`](Wire::drop_event_stream_at)).
///   Routes are spelled as wire gates are: `POST /session/{id}/abort`.
/// - **Log**: the product's requests in the order they arrived ([`requests`](Wire::requests)),
///   with the route's template and the status the product got, bodies only after
///   [`record_bodies`](Wire::record_bodies); [`counters`](Wire::counters) per route and per
///   event type delivered. Everything read is redacted with the scenario's redactor.
///
/// [`Agent::forwarded_url`]: crate::opencode::Agent::forwarded_url
pub struct Wire {
    redactor: Arc<Redactor>,
    /// Some request fault is armed: requests check nothing else while it is false.
    requests_armed: AtomicBool,
    /// Some event-stream drop at an event is armed: frames check nothing else while false.
    drops_armed: AtomicBool,
    bodies: AtomicBool,
    faults: Mutex<Faults>,
    log: Mutex<Log>,
    /// Events delivered to products, by type.
    events: Mutex<HashMap<String, u64>>,
    /// How many times the product's event streams were dropped: a stream ends when it changes.
    drops: watch::Sender<u64>,
}

impl std::fmt::Debug for Wire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wire")
            .field("logged", &lock(&self.log).entries.len())
            .finish_non_exhaustive()
    }
}

#[derive(Default)]
struct Faults {
    failures: Vec<Failure>,
    delays: Vec<(RoutePattern, Duration)>,
    drops: Vec<DropAt>,
}

struct Failure {
    route: RoutePattern,
    status: u16,
    body: String,
}

struct DropAt {
    event_type: String,
    /// The count of delivered events of the type the dropped one would have had.
    at: u64,
}

#[derive(Default)]
struct Log {
    entries: Vec<Logged>,
    /// Requests by `METHOD route`, all of them (the log keeps the first [`MAX_LOGGED`]).
    routes: HashMap<String, u64>,
}

struct Logged {
    method: String,
    route: Cow<'static, str>,
    status: Option<u16>,
    request_body: Option<Bytes>,
    response_body: Option<Bytes>,
}

/// One request a product sent through a forwarder, as the log keeps it (redacted).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ProductRequest {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The OpenCode route it hit, as its API spells it (`/session/{sessionID}/abort`); the path
    /// itself, redacted, when OpenCode has no such route.
    pub route: String,
    /// The status the product got: the agent's, a fault's, or 502 when the agent was gone.
    /// `None` while no response has arrived, or when the product left before one did.
    pub status: Option<u16>,
    /// The request's body, after [`Wire::record_bodies`]: JSON as JSON, anything else as text,
    /// cut after 64 KiB.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_body: Option<serde_json::Value>,
    /// The response's body, after [`Wire::record_bodies`], once it arrived whole (an event
    /// stream's never is, so it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_body: Option<serde_json::Value>,
}

/// How many requests each route got, and how many events of each type the product's event
/// streams delivered (`server.heartbeat` aside: their number depends on time). Keys sort, so a
/// snapshot of it is stable.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct WireCounters {
    /// By `METHOD route`, e.g. `POST /session/{sessionID}/prompt_async`.
    pub requests: BTreeMap<String, u64>,
    /// By event type, e.g. `session.idle`.
    pub events: BTreeMap<String, u64>,
}

/// The place of a request in the log, to complete it when its response arrives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LogSlot(Option<usize>);

impl Wire {
    /// The wire of a scenario whose outputs `redactor` redacts.
    pub(crate) fn new(redactor: Arc<Redactor>) -> Self {
        Self {
            redactor,
            requests_armed: AtomicBool::new(false),
            drops_armed: AtomicBool::new(false),
            bodies: AtomicBool::new(false),
            faults: Mutex::default(),
            log: Mutex::default(),
            events: Mutex::default(),
            drops: watch::Sender::new(0),
        }
    }

    /// Answers the next request matching `route` (`POST /session/{id}/abort`) with `status` and
    /// `body`, without forwarding it: the agent never sees it. Once; arm it again for another.
    /// A body that is JSON goes as `application/json`, anything else as `text/plain`.
    pub fn fail_once(
        &self,
        route: &str,
        status: u16,
        body: impl Into<String>,
    ) -> Result<(), WireError> {
        let pattern = parse_route(route)?;
        if !(200..=599).contains(&status) {
            return Err(WireError::Status {
                route: route.to_owned(),
                status,
            });
        }
        note(Lane::Wire, "fault armed", || {
            format!("fail once: {pattern} answered {status}")
        });
        lock(&self.faults).failures.push(Failure {
            route: pattern,
            status,
            body: body.into(),
        });
        self.requests_armed.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Holds every later request matching `route` for `delay` (scaled by `LIVE_TIMEOUT_SCALE`)
    /// before it is forwarded. Arming the route again replaces its delay; `Duration::ZERO` ends it.
    pub fn delay(&self, route: &str, delay: Duration) -> Result<(), WireError> {
        let pattern = parse_route(route)?;
        let delay = crate::settings::scaled(delay);
        note(Lane::Wire, "fault armed", || {
            format!("delay {pattern} by {}", humantime::format_duration(delay))
        });
        let mut faults = lock(&self.faults);
        let spelled = pattern.to_string();
        faults.delays.retain(|(p, _)| p.to_string() != spelled);
        if !delay.is_zero() {
            faults.delays.push((pattern, delay));
        }
        self.requests_armed.store(
            !faults.failures.is_empty() || !faults.delays.is_empty(),
            Ordering::SeqCst,
        );
        Ok(())
    }

    /// Drops every event stream a product has open through the scenario's forwarders, now,
    /// once: each ends as a connection that broke (streams opened later are not touched).
    /// Returns how many were open.
    pub fn drop_event_stream_now(&self) -> usize {
        let open = self.drops.receiver_count();
        note(Lane::Wire, "fault", || {
            format!("event streams dropped now: {open}")
        });
        self.drops.send_modify(|drops| *drops += 1);
        open
    }

    /// Drops the product's event streams right before the `n`th event of `event_type` (counted
    /// from now, 1 = the next one) would be delivered: that event and every later one never
    /// reach the streams open then. Once.
    pub fn drop_event_stream_at(&self, event_type: &str, n: u64) -> Result<(), WireError> {
        let event_type = EventType::parse(event_type)
            .map_err(|source| WireError::EventType {
                event_type: event_type.to_owned(),
                source,
            })?
            .as_str();
        if n == 0 {
            return Err(WireError::ZeroCount {
                event_type: event_type.to_owned(),
            });
        }
        // Events before faults, as `deliver_event` locks them.
        let events = lock(&self.events);
        let at = events.get(event_type).copied().unwrap_or(0) + n;
        note(Lane::Wire, "fault armed", || {
            format!("drop the event streams at {event_type} number {n} from now")
        });
        lock(&self.faults).drops.push(DropAt {
            event_type: event_type.to_owned(),
            at,
        });
        self.drops_armed.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// Keeps the bodies of the requests and responses that arrive from now on in the log
    /// (`false`: stops keeping them). Off by default: bodies are large and seldom what a test
    /// asserts on.
    pub fn record_bodies(&self, record: bool) {
        self.bodies.store(record, Ordering::SeqCst);
    }

    /// The product's requests through the scenario's forwarders, in the order they arrived
    /// (the first 10,000), redacted.
    pub fn requests(&self) -> Vec<ProductRequest> {
        let log = lock(&self.log);
        log.entries
            .iter()
            .map(|logged| ProductRequest {
                method: logged.method.clone(),
                route: match &logged.route {
                    Cow::Borrowed(template) => (*template).to_owned(),
                    Cow::Owned(path) => self.redactor.redact(path),
                },
                status: logged.status,
                request_body: logged.request_body.as_ref().map(|b| self.body(b)),
                response_body: logged.response_body.as_ref().map(|b| self.body(b)),
            })
            .collect()
    }

    /// Requests per route and events delivered per type so far.
    pub fn counters(&self) -> WireCounters {
        let requests = lock(&self.log)
            .routes
            .iter()
            .map(|(route, n)| (self.redactor.redact(route), *n))
            .collect();
        let events = lock(&self.events)
            .iter()
            .filter(|(kind, _)| *kind != HEARTBEAT)
            .map(|(kind, n)| (kind.clone(), *n))
            .collect();
        WireCounters { requests, events }
    }

    fn body(&self, bytes: &Bytes) -> serde_json::Value {
        match serde_json::from_slice::<serde_json::Value>(bytes) {
            Ok(json) => self.redactor.redact_json(&json),
            Err(_) => {
                serde_json::Value::String(self.redactor.redact(&String::from_utf8_lossy(bytes)))
            }
        }
    }

    /// Logs a request that arrived: `route` is its template, or its path when OpenCode has none.
    pub(crate) fn begin(&self, method: &str, route: Cow<'static, str>) -> LogSlot {
        let mut log = lock(&self.log);
        *log.routes.entry(format!("{method} {route}")).or_default() += 1;
        if log.entries.len() >= MAX_LOGGED {
            return LogSlot(None);
        }
        log.entries.push(Logged {
            method: method.to_owned(),
            route,
            status: None,
            request_body: None,
            response_body: None,
        });
        LogSlot(Some(log.entries.len() - 1))
    }

    /// Completes a logged request with the status the product gets.
    pub(crate) fn answered(&self, logged: LogSlot, status: u16) {
        if let Some(index) = logged.0 {
            lock(&self.log).entries[index].status = Some(status);
        }
    }

    /// Whether bodies are kept now.
    pub(crate) fn keeps_bodies(&self) -> bool {
        self.bodies.load(Ordering::Relaxed)
    }

    /// Keeps a request's body (at most [`MAX_BODY`] bytes of it).
    pub(crate) fn request_body(&self, logged: LogSlot, body: Bytes) {
        if let Some(index) = logged.0 {
            lock(&self.log).entries[index].request_body = Some(body);
        }
    }

    /// Keeps a response's body (at most [`MAX_BODY`] bytes of it).
    pub(crate) fn response_body(&self, logged: LogSlot, body: Bytes) {
        if let Some(index) = logged.0 {
            lock(&self.log).entries[index].response_body = Some(body);
        }
    }

    /// The delay armed for a request with `method` to `path`, if any.
    pub(crate) fn delay_for(&self, method: &str, path: &str) -> Option<Duration> {
        if !self.requests_armed.load(Ordering::SeqCst) {
            return None;
        }
        let faults = lock(&self.faults);
        let (route, delay) = faults
            .delays
            .iter()
            .find(|(route, _)| route.matches(method, path))?;
        note(Lane::Wire, "fault", || {
            format!("{route} delayed {}", humantime::format_duration(*delay))
        });
        Some(*delay)
    }

    /// The answer armed for the next request with `method` to `path`, if any: `(status, body)`,
    /// taken (it fires once).
    pub(crate) fn take_failure(&self, method: &str, path: &str) -> Option<(u16, String)> {
        if !self.requests_armed.load(Ordering::SeqCst) {
            return None;
        }
        let mut faults = lock(&self.faults);
        let index = faults
            .failures
            .iter()
            .position(|failure| failure.route.matches(method, path))?;
        let failure = faults.failures.remove(index);
        self.requests_armed.store(
            !faults.failures.is_empty() || !faults.delays.is_empty(),
            Ordering::SeqCst,
        );
        note(Lane::Wire, "fault", || {
            format!(
                "{} answered {} by the forwarder",
                failure.route, failure.status
            )
        });
        Some((failure.status, failure.body))
    }

    /// A handle a product's event stream watches: it ends when the value changes.
    pub(crate) fn watch_drops(&self) -> watch::Receiver<u64> {
        self.drops.subscribe()
    }

    /// Called right before a frame of `event_type` is delivered on a product's stream: counts
    /// it, or, when a drop is armed at it, drops the product's streams and returns false (the
    /// frame is not delivered).
    pub(crate) fn deliver_event(&self, event_type: &str) -> bool {
        let mut events = lock(&self.events);
        if self.drops_armed.load(Ordering::SeqCst) {
            let count = events.get(event_type).copied().unwrap_or(0);
            let mut faults = lock(&self.faults);
            let armed = faults
                .drops
                .iter()
                .position(|drop| drop.event_type == event_type && drop.at == count + 1);
            if let Some(index) = armed {
                faults.drops.remove(index);
                self.drops_armed
                    .store(!faults.drops.is_empty(), Ordering::SeqCst);
                drop(faults);
                drop(events);
                let open = self.drops.receiver_count();
                note(Lane::Wire, "fault", || {
                    format!(
                        "event streams dropped before {event_type} number {}: {open}",
                        count + 1
                    )
                });
                self.drops.send_modify(|drops| *drops += 1);
                return false;
            }
        }
        match events.get_mut(event_type) {
            Some(n) => *n += 1,
            None => {
                events.insert(event_type.to_owned(), 1);
            }
        }
        true
    }
}

fn parse_route(route: &str) -> Result<RoutePattern, WireError> {
    RoutePattern::parse(route).map_err(|source| WireError::Route {
        route: route.to_owned(),
        source,
    })
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code panics while holding these locks; recover rather than cascade a poisoned state.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
