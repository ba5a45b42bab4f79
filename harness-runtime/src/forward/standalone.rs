//! A forwarder outside any scenario, in front of a server the caller started (the fixture
//! agent of a test): for the harness's own tests of the forwarder and of clients through it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};

use super::{Target, Wire};
use crate::gates::Gates;
use crate::redact::Redactor;

/// A forwarder in front of a fixed loopback server, with a wire and gates of its own.
///
/// ```no_run
/// # async fn f() -> std::io::Result<()> {
/// let forwarder = harness_runtime::testing::Forwarder::start("http://127.0.0.1:4096")?;
/// let url = forwarder.url(); // hand this to the client under test
/// forwarder.wire().fail_once("POST /session/{id}/abort", 503, "{}").unwrap();
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Forwarder {
    forwarder: super::Forwarder,
    upstream: Arc<AtomicU16>,
    wire: Arc<Wire>,
    gates: Arc<Gates>,
    redactor: Arc<Redactor>,
}

impl Forwarder {
    /// Starts a forwarder to `upstream` (`http://127.0.0.1:<port>`) on the current tokio
    /// runtime. Fails outside a runtime, when loopback cannot be bound, or when `upstream` is
    /// not a loopback base URL.
    pub fn start(upstream: &str) -> std::io::Result<Forwarder> {
        let port = Arc::new(AtomicU16::new(port_of(upstream)?));
        let redactor = Arc::new(Redactor::for_scenario());
        let wire = Arc::new(Wire::new(redactor.clone()));
        let gates = Arc::new(Gates::default());
        let current = port.clone();
        let forwarder = super::Forwarder::start(Target {
            upstream: Arc::new(move || Ok(current.load(Ordering::SeqCst))),
            directory: None,
            wire: wire.clone(),
            gates: gates.clone(),
            redactor: redactor.clone(),
        })?;
        Ok(Forwarder {
            forwarder,
            upstream: port,
            wire,
            gates,
            redactor,
        })
    }

    /// Its base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        self.forwarder.url()
    }

    /// Forwards later requests to `upstream` (`http://127.0.0.1:<port>`) instead, as after an
    /// agent's restart on another port.
    pub fn retarget(&self, upstream: &str) -> std::io::Result<()> {
        self.upstream.store(port_of(upstream)?, Ordering::SeqCst);
        Ok(())
    }

    /// Its wire: faults and the log of what passed.
    pub fn wire(&self) -> &Wire {
        &self.wire
    }

    /// The redactor of its wire's log and its 502s: register secrets here.
    pub fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// Its gates: arm wire points here.
    pub fn gates(&self) -> &Arc<Gates> {
        &self.gates
    }
}

fn port_of(upstream: &str) -> std::io::Result<u16> {
    upstream
        .trim_end_matches('/')
        .strip_prefix("http://127.0.0.1:")
        .and_then(|port| port.parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{upstream}` is not a loopback base URL such as http://127.0.0.1:4096"),
            )
        })
}
