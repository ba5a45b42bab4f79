//! The scenario's agent: its root, and how it holds the server it runs on — a server process of
//! its own, or a lease on a shared one (`LIVE_ISOLATION=shared`).

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::ProvisionError;
use super::pool::PoolLease;
use super::root::AgentRoot;
use super::server_process::ServerProcess;
use crate::gates::{GatePoint, Gates};
use crate::redact::Redactor;

/// A provisioned agent server. Cheap to clone: every clone is the same server.
///
/// The scenario's [`Live`](crate::Live) keeps a clone too and stops the server when the scenario
/// ends, whatever happens; dropping the last clone kills it synchronously.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

struct Inner {
    index: usize,
    /// The scenario's root: its workspace, and (on a server of its own) the server's files.
    root: AgentRoot,
    redactor: Arc<Redactor>,
    gates: Arc<Gates>,
    server: HeldServer,
    /// The forwarder products reach the agent through; provisioning starts it.
    forwarder: std::sync::OnceLock<crate::forward::Forwarder>,
    /// The runner's own subscription to the agent's events (see [`Agent::observed`]).
    observer: crate::evidence::Observer,
}

/// How the scenario holds the server its agent runs on.
enum HeldServer {
    /// A server of its own, on the agent's root: started, stopped and restarted at will.
    Own {
        process: Box<ServerProcess>,
        /// [`Agent::stop_and_retain`] asked to keep the root after the scenario.
        retain: AtomicBool,
    },
    /// The agent is a directory on a shared server: the pool owns the process, and its lease
    /// ends with the scenario.
    Leased(PoolLease),
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("index", &self.inner.index)
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent with a server of its own: `process`, made with the scenario's redactor and
    /// gates on the agent's root.
    pub(crate) fn own(index: usize, process: ServerProcess) -> Self {
        let root = process.root().clone();
        let redactor = process.redactor().clone();
        let gates = process.gates().clone();
        let server = HeldServer::Own {
            process: Box::new(process),
            retain: AtomicBool::new(false),
        };
        Self::holding(index, root, server, redactor, gates)
    }

    /// An agent that is the scenario's directory `root` on a leased shared server.
    pub(crate) fn leased(
        index: usize,
        root: AgentRoot,
        lease: impl Into<PoolLease>,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Self {
        Self::holding(
            index,
            root,
            HeldServer::Leased(lease.into()),
            redactor,
            gates,
        )
    }

    fn holding(
        index: usize,
        root: AgentRoot,
        server: HeldServer,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Self {
        // On a shared server only the workspace's events are the agent's.
        let observed_directory = matches!(server, HeldServer::Leased(_)).then_some(&root.workspace);
        let observer = crate::evidence::Observer::new(
            redactor.clone(),
            observed_directory.map(PathBuf::as_path),
            gates.scheduler().cloned(),
        );
        Agent {
            inner: Arc::new(Inner {
                index,
                root,
                redactor,
                gates,
                server,
                forwarder: std::sync::OnceLock::new(),
                observer,
            }),
        }
    }

    /// Makes sure the observer reads the events of the server the agent runs now: at
    /// provisioning, before anything can drive the agent, and after each start.
    pub(crate) async fn observe(&self) {
        let source = ObservedAgent(Arc::downgrade(&self.inner));
        let source = Arc::new(source);
        self.inner.observer.attach(source.clone()).await;
        // An already booted instance's events reach a new subscription a few ms after its
        // `server.connected` (see `Observer::confirm`); a fresh directory boots later than that.
        if self.in_warm_workspace() {
            self.inner.observer.confirm(&*source).await;
        }
    }

    /// What the agent did while the scenario ran, whoever drove it (a product's own client,
    /// the harness's): every session it served, in creation order, each summarised as a
    /// recorded turn is (event trace, messages by role with part types, tool calls with
    /// status, asks with their replies, structured output, errors), redacted with numbered
    /// placeholders counted from the record. Record it with
    /// [`Evidence::record_observed`](crate::evidence::Evidence::record_observed).
    ///
    /// The runner subscribed to the agent's events when it was provisioned, on a stream of its
    /// own: a product's stream dropping costs the record nothing. Events the agent already
    /// sent are waited for (10 s at most, scaled), and each session's messages are read from
    /// the agent now when it runs, so they are complete even where events were missed. Where
    /// the observer's stream ended and was subscribed again (a restart), the record's `gaps`
    /// say that events in between may be missing.
    pub async fn observed(&self) -> crate::evidence::Observed {
        let source = ObservedAgent(Arc::downgrade(&self.inner));
        self.inner.observer.observed(&source).await
    }

    /// Every message the agent reported while the scenario ran (whoever drove it), each in its
    /// last known state: what the scenario's budget is checked against. `settle`: let the events
    /// the agent already sent arrive first.
    pub(crate) async fn messages_seen(&self, settle: bool) -> Vec<crate::client::MessageInfo> {
        let source = ObservedAgent(Arc::downgrade(&self.inner));
        self.inner.observer.messages(&source, settle).await
    }

    /// Starts the forwarder in front of this agent (once), forwarding to its current port and,
    /// on a shared server, naming its workspace where a request names no directory.
    pub(crate) fn start_forwarder(&self, wire: &Arc<crate::forward::Wire>) -> std::io::Result<()> {
        if self.inner.forwarder.get().is_some() {
            return Ok(());
        }
        // Weak: the forwarder lives in the agent, and must not keep it alive.
        let agent = Arc::downgrade(&self.inner);
        let upstream: crate::forward::Upstream = Arc::new(move || {
            let inner = agent.upgrade().ok_or("the agent was dropped")?;
            match (Agent { inner }).port() {
                0 => Err("the agent never started"),
                port => Ok(port),
            }
        });
        let forwarder = crate::forward::Forwarder::start(crate::forward::Target {
            upstream,
            directory: self.shared_directory().map(Path::to_path_buf),
            wire: wire.clone(),
            gates: self.inner.gates.clone(),
            redactor: self.inner.redactor.clone(),
        })?;
        crate::timeline::note(crate::timeline::Lane::Provisioning, "forwarder", || {
            forwarder.url()
        });
        let _ = self.inner.forwarder.set(forwarder);
        Ok(())
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (the last one, while stopped).
    pub fn endpoint(&self) -> String {
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.endpoint(),
            HeldServer::Leased(lease) => lease.endpoint(),
        }
    }

    /// The URL a product under test is given instead of [`endpoint`](Self::endpoint),
    /// `http://127.0.0.1:<port>`: the agent's forwarder, which forwards every request and
    /// response unchanged to the agent's current port (it stays the same across restarts),
    /// passing the scenario's wire gates and [faults](crate::forward::Wire) and logging the
    /// product's requests. On a shared server it names the agent's workspace where a request
    /// names no directory. The harness's own client ([`client`](Self::client)) does not use it.
    pub fn forwarded_url(&self) -> String {
        self.inner
            .forwarder
            .get()
            .expect("provisioning starts a forwarder in front of every agent")
            .url()
    }

    /// The loopback port the server listens on (0 before the first start).
    pub fn port(&self) -> u16 {
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.port(),
            HeldServer::Leased(lease) => lease.port(),
        }
    }

    /// Whether this agent is a directory on a shared server (`LIVE_ISOLATION=shared`) rather
    /// than a server of its own. Its client then sends `?directory=<workspace>`.
    pub fn is_shared(&self) -> bool {
        matches!(self.inner.server, HeldServer::Leased(_))
    }

    /// The workspace a shared agent's client names in `?directory=`.
    pub(crate) fn shared_directory(&self) -> Option<&Path> {
        self.is_shared().then(|| self.workspace())
    }

    /// The agent's working directory: tools read and write here.
    pub fn workspace(&self) -> &Path {
        &self.inner.root.workspace
    }

    /// The agent's isolated root: workspace, database, XDG dirs, home, tmp and the server logs.
    pub fn root(&self) -> &Path {
        &self.inner.root.root
    }

    /// The last `n` lines of the server's stdout and stderr, redacted. A shared server's log
    /// holds every scenario's lines that used it.
    pub fn log_tail(&self, n: usize) -> String {
        let tail = match &self.inner.server {
            HeldServer::Own { process, .. } => process.unredacted_log_tail(n),
            HeldServer::Leased(lease) => lease.unredacted_log_tail(n),
        };
        self.inner.redactor.redact(&tail)
    }

    /// The server's pid while it runs (a shared server's: other scenarios use it too).
    pub fn pid(&self) -> Option<u32> {
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.pid(),
            HeldServer::Leased(lease) => lease.pid(),
        }
    }

    /// Whether the server process is running.
    pub fn is_running(&self) -> bool {
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.is_running(),
            HeldServer::Leased(lease) => lease.is_running(),
        }
    }

    /// Waits until the server exits on its own (a crash, an injected fault such as the fixture
    /// agent's exit mid-turn), up to `ceiling` scaled by `LIVE_TIMEOUT_SCALE`, and until its
    /// output is read to the end: [`log_tail`](Self::log_tail) then holds its last lines, which
    /// [`is_running`](Self::is_running) turning false does not promise. The error when it still
    /// runs carries the tail of its log. A server of a nextest run's pool runs in another
    /// process and cannot be waited for: refused as a shared server's `stop` is.
    pub async fn wait_exit(&self, ceiling: Duration) -> Result<ExitStatus, ProvisionError> {
        let ceiling = crate::settings::scaled(ceiling);
        match &self.inner.server {
            HeldServer::Own { process, .. } => {
                process.wait_exit(ceiling, &self.inner.redactor).await
            }
            HeldServer::Leased(lease) => lease.wait_exit(ceiling, &self.inner.redactor).await,
        }
    }

    /// Starts the server (again) on the same root: sessions persist, since the database lives
    /// in the root. Keeps the previous port when it is still free. Does nothing if running.
    pub async fn start(&self) -> Result<(), ProvisionError> {
        match &self.inner.server {
            HeldServer::Own { process, .. } => {
                process.start().await?;
                self.observe().await;
                Ok(())
            }
            // Starting a running server is a no-op; a shared one that died cannot be restarted
            // by one of its scenarios.
            HeldServer::Leased(_) if self.is_running() => Ok(()),
            HeldServer::Leased(_) => Err(refused_on_shared("start")),
        }
    }

    /// Stops the server: passes the `BeforeStop` gate, lets the observer catch up with the
    /// events the agent already sent (see [`observed`](Self::observed)), then SIGTERM → bounded
    /// wait → SIGKILL → reap → kills every process that still carries the agent's owner mark
    /// (detached tool commands). Does nothing if it is not running.
    pub async fn stop(&self) -> Result<(), ProvisionError> {
        let process = self.own_process("stop")?;
        if !process.holds_process() {
            return Ok(());
        }
        self.inner.gates.pass(GatePoint::BeforeStop).await;
        let source = ObservedAgent(Arc::downgrade(&self.inner));
        self.inner.observer.settle(&source).await;
        process.stop().await
    }

    /// [`stop`](Self::stop), then [`start`](Self::start) on the same root.
    pub async fn restart(&self) -> Result<(), ProvisionError> {
        self.stop().await?;
        self.start().await
    }

    /// Stops the server and keeps its root after the scenario, even after a pass (its path is
    /// printed): for evidence a later look needs.
    pub async fn stop_and_retain(&self) -> Result<(), ProvisionError> {
        match &self.inner.server {
            HeldServer::Own { retain, .. } => retain.store(true, Ordering::SeqCst),
            HeldServer::Leased(_) => return Err(refused_on_shared("stop_and_retain")),
        }
        self.stop().await
    }

    /// The server process of the agent's own; on a shared server, `operation` is refused.
    fn own_process(&self, operation: &'static str) -> Result<&ServerProcess, ProvisionError> {
        match &self.inner.server {
            HeldServer::Own { process, .. } => Ok(process),
            HeldServer::Leased(_) => Err(refused_on_shared(operation)),
        }
    }

    /// The scenario's redactor (for the client and diagnostics).
    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.inner.redactor
    }

    /// The scenario's gates (for the client).
    pub(crate) fn gates(&self) -> &Arc<Gates> {
        &self.inner.gates
    }

    #[cfg(any(test, feature = "testing"))]
    /// The owner mark every process of this agent carries.
    pub(crate) fn owner_token(&self) -> &str {
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.owner_token(),
            HeldServer::Leased(lease) => lease.owner_token(),
        }
    }

    /// Ends a shared agent's lease (see [`Lease::release`]); nothing for an agent of its own.
    pub(crate) async fn release_lease(&self, passed: bool) {
        if let HeldServer::Leased(lease) = &self.inner.server {
            // An ask answered `always` just before the end must be seen before the seat is
            // handed on.
            self.inner
                .observer
                .settle(&ObservedAgent(Arc::downgrade(&self.inner)))
                .await;
            // The scenario is over: nothing it records comes later.
            self.inner.observer.stop();
            let approved = self.inner.observer.may_have_approved_always();
            lease.release(passed, self.workspace(), approved).await;
        } else {
            self.inner.observer.stop();
        }
    }

    /// Whether the agent is a warm workspace of a shared server: an earlier scenario with the
    /// same config booted its instance, which was reset for this one.
    pub(crate) fn in_warm_workspace(&self) -> bool {
        matches!(&self.inner.server, HeldServer::Leased(lease) if lease.seat().is_some_and(|s| s.2))
    }

    /// Whether the agent's root is a warm workspace the shared pool took back: not the
    /// scenario's to remove.
    pub(crate) fn root_is_pools(&self) -> bool {
        matches!(&self.inner.server, HeldServer::Leased(lease) if lease.seat_kept())
    }

    /// Whether [`stop_and_retain`](Self::stop_and_retain) asked to keep the root.
    pub(crate) fn retained(&self) -> bool {
        match &self.inner.server {
            HeldServer::Own { retain, .. } => retain.load(Ordering::SeqCst),
            HeldServer::Leased(_) => false,
        }
    }

    /// Teardown's stop: no gate (an armed, never released gate must not hang teardown). A
    /// shared server is the pool's to stop.
    pub(crate) async fn stop_ungated(&self) -> Result<(), ProvisionError> {
        self.inner.observer.stop();
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.stop().await,
            HeldServer::Leased(_) => Ok(()),
        }
    }

    /// The synchronous fallback: SIGKILL, reap, sweep, without any runtime. A shared agent's
    /// server is not its own to kill: its lease is abandoned (the server retired) instead.
    pub(crate) fn kill_blocking(&self) {
        self.inner.observer.stop();
        match &self.inner.server {
            HeldServer::Own { process, .. } => process.kill_blocking(),
            HeldServer::Leased(lease) => lease.abandon(),
        }
    }
}

/// The agent as its observer sees it: weak, since the agent owns the observer.
struct ObservedAgent(std::sync::Weak<Inner>);

impl ObservedAgent {
    fn agent(&self) -> Option<Agent> {
        self.0.upgrade().map(|inner| Agent { inner })
    }
}

impl crate::evidence::ObserverSource for ObservedAgent {
    fn client(&self) -> Option<crate::client::Client> {
        let agent = self.agent()?;
        // No gates: observing must never pass one the scenario armed for its own calls.
        let client = crate::client::Client::new(agent.endpoint(), agent.redactor().clone());
        Some(match agent.shared_directory() {
            Some(directory) => client.with_directory(directory),
            None => client,
        })
    }

    fn pid(&self) -> Option<u32> {
        self.agent()?.pid()
    }
}

/// Stopping, restarting or retaining a shared server would hit every scenario on it.
fn refused_on_shared(operation: &'static str) -> ProvisionError {
    ProvisionError::SharedServer { operation }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencode::pool::Lease;
    use crate::opencode::server_process::Launch;
    use std::path::PathBuf;
    use std::time::Duration;

    fn scenario_root(redactor: &Redactor) -> AgentRoot {
        let root = AgentRoot::create("unit::agent").unwrap();
        root.register(redactor, 1);
        root
    }

    /// A leased agent over a server that is not running: every lifecycle operation is refused
    /// with the way out, and what it reports about the server is the server's.
    #[tokio::test]
    async fn a_leased_agent_refuses_the_servers_lifecycle() {
        let redactor = Arc::new(Redactor::for_scenario());
        let server_root = AgentRoot::create("unit::shared-server").unwrap();
        let server = ServerProcess::new(
            server_root.clone(),
            Launch {
                program: PathBuf::from("sh"),
                env: Vec::new(),
            },
            Duration::from_secs(1),
            Arc::new(Redactor::for_scenario()),
            Arc::default(),
        );
        let server_token = server.owner_token().to_string();
        let root = scenario_root(&redactor);
        let agent = Agent::leased(
            1,
            root.clone(),
            Lease::unpooled(server),
            redactor,
            Arc::default(),
        );
        assert!(agent.is_shared());
        assert_eq!(agent.shared_directory(), Some(root.workspace.as_path()));
        assert_eq!(agent.owner_token(), server_token);
        assert_eq!(agent.root(), root.root);
        for (operation, result) in [
            ("stop", agent.stop().await),
            // A restart is refused at its stop.
            ("stop", agent.restart().await),
            ("stop_and_retain", agent.stop_and_retain().await),
            ("start", agent.start().await),
        ] {
            let refused = result.unwrap_err();
            assert!(
                matches!(refused, ProvisionError::SharedServer { operation: o } if o == operation),
                "{operation}: {refused}"
            );
            assert!(refused.to_string().contains("isolation = \"server\""));
        }
        assert!(!agent.retained());
        agent.stop_ungated().await.unwrap();
        std::fs::remove_dir_all(&root.root).unwrap();
        std::fs::remove_dir_all(&server_root.root).unwrap();
    }

    /// An agent of its own stops what it started and keeps its root when asked to.
    #[tokio::test]
    async fn an_own_agent_is_not_shared_and_retains_on_request() {
        let redactor = Arc::new(Redactor::for_scenario());
        let root = scenario_root(&redactor);
        let launch = Launch {
            program: PathBuf::from("sh"),
            env: Vec::new(),
        };
        let process = ServerProcess::new(
            root.clone(),
            launch,
            Duration::from_secs(1),
            redactor,
            Arc::default(),
        );
        let agent = Agent::own(1, process);
        assert!(!agent.is_shared());
        assert_eq!(agent.shared_directory(), None);
        assert!(!agent.retained());
        // Never started: nothing to stop, but the wish to keep the root holds.
        agent.stop_and_retain().await.unwrap();
        assert!(agent.retained());
        std::fs::remove_dir_all(&root.root).unwrap();
    }
}
