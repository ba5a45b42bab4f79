//! The agent handle and its lifecycle: start, readiness, stop, restart, retain.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::ProvisionError;
use super::logs::{self, ServerLog};
use super::port;
use super::ready::{self, NotReady};
use super::root::AgentRoot;
use super::shared_pool::Lease;
use crate::gates::{Counter, GatePoint, Gates};
use crate::process::{self, OwnedChild};
use crate::redact::Redactor;

/// How long a server gets between SIGTERM and SIGKILL (OpenCode exits in ~0.1 s).
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long the reap may take after SIGKILL.
const STOP_CEILING: Duration = Duration::from_secs(10);
/// How long diagnostics wait for the output pipes to drain after an exit.
const DRAIN_CEILING: Duration = Duration::from_secs(2);
/// Log lines a failure message carries.
const FAILURE_TAIL: usize = 40;

/// The program and environment of an agent; the same spawn path serves OpenCode and the fixture.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    /// Set after the inherited environment was cleaned, in order (later entries win).
    pub(crate) env: Vec<(String, String)>,
}

/// Inherited variables that would break isolation: the user's own OpenCode settings, and roles
/// or owner marks of this harness (the fixture's launch spec sets its role again explicitly).
fn inherited_to_remove() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| {
            k.starts_with("OPENCODE_") || k == "HARNESS_RUNTIME_ROLE" || k == process::OWNER_ENV
        })
        .collect()
}

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
    root: AgentRoot,
    launch: Launch,
    token: String,
    ready_timeout: Duration,
    redactor: Arc<Redactor>,
    gates: Arc<Gates>,
    log: Arc<ServerLog>,
    port: AtomicU16,
    ports_registered: Mutex<Vec<u16>>,
    running: Mutex<Option<OwnedChild>>,
    retain: AtomicBool,
    /// Serializes start/stop/restart of this agent.
    op: tokio::sync::Mutex<()>,
    http: reqwest::Client,
    /// Under shared isolation: the leased server this agent is a directory of. The agent then
    /// has no process of its own; `root` holds its workspace and project config.
    lease: Option<Lease>,
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
    pub(crate) fn new(
        index: usize,
        root: AgentRoot,
        launch: Launch,
        ready_timeout: Duration,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Self {
        Self::build(index, root, launch, ready_timeout, redactor, gates, None)
    }

    /// An agent that is the scenario's directory on a leased shared server.
    pub(crate) fn leased(
        index: usize,
        root: AgentRoot,
        lease: Lease,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Self {
        let server = lease.server().agent();
        let launch = Launch {
            program: server.launch_program().to_path_buf(),
            env: Vec::new(),
        };
        let ready_timeout = server.inner.ready_timeout;
        Self::build(
            index,
            root,
            launch,
            ready_timeout,
            redactor,
            gates,
            Some(lease),
        )
    }

    fn build(
        index: usize,
        root: AgentRoot,
        launch: Launch,
        ready_timeout: Duration,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
        lease: Option<Lease>,
    ) -> Self {
        Agent {
            inner: Arc::new(Inner {
                index,
                root,
                launch,
                token: process::new_token(),
                ready_timeout,
                redactor,
                gates,
                log: Arc::default(),
                port: AtomicU16::new(0),
                ports_registered: Mutex::default(),
                running: Mutex::default(),
                retain: AtomicBool::new(false),
                op: tokio::sync::Mutex::new(()),
                http: crate::client::loopback_http_client(),
                lease,
            }),
        }
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (the last one, while stopped).
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// The loopback port the server listens on (0 before the first start).
    pub fn port(&self) -> u16 {
        match &self.inner.lease {
            Some(lease) => lease.server().agent().port(),
            None => self.inner.port.load(Ordering::SeqCst),
        }
    }

    /// Whether this agent is a directory on a shared server (`LIVE_ISOLATION=shared`) rather
    /// than a server of its own. Its client then sends `?directory=<workspace>`.
    pub fn is_shared(&self) -> bool {
        self.inner.lease.is_some()
    }

    /// The workspace a shared agent's client names in `?directory=`.
    pub(crate) fn shared_directory(&self) -> Option<&Path> {
        self.inner.lease.as_ref().map(|_| self.workspace())
    }

    pub(crate) fn launch_program(&self) -> &Path {
        &self.inner.launch.program
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
        let log = match &self.inner.lease {
            Some(lease) => lease.server().agent().inner.log.tail(n),
            None => self.inner.log.tail(n),
        };
        self.inner.redactor.redact(&log)
    }

    /// The server's pid while it runs (a shared server's: other scenarios use it too).
    pub fn pid(&self) -> Option<u32> {
        if let Some(lease) = &self.inner.lease {
            return lease.server().agent().pid();
        }
        let running = self.inner.running.lock().expect("agent lock");
        running
            .as_ref()
            .filter(|c| c.exit_status().is_none())
            .map(OwnedChild::pid)
    }

    /// Whether the server process is running.
    pub fn is_running(&self) -> bool {
        self.pid().is_some()
    }

    /// Starts the server (again) on the same root: sessions persist, since the database lives
    /// in the root. Keeps the previous port when it is still free. Does nothing if running.
    pub async fn start(&self) -> Result<(), ProvisionError> {
        if self.inner.lease.is_some() {
            // Starting a running server is a no-op; a shared one that died cannot be restarted
            // by one of its scenarios.
            if self.is_running() {
                return Ok(());
            }
            return self.refuse_on_shared("start");
        }
        let _op = self.inner.op.lock().await;
        self.start_locked().await
    }

    /// Stopping, restarting or retaining a shared server would hit every scenario on it.
    fn refuse_on_shared(&self, operation: &'static str) -> Result<(), ProvisionError> {
        if self.inner.lease.is_some() {
            return Err(ProvisionError::SharedServer { operation });
        }
        Ok(())
    }

    /// Stops the server: passes the `BeforeStop` gate, then SIGTERM → bounded wait → SIGKILL →
    /// reap → kills every process that still carries the agent's owner mark (detached tool
    /// commands). Does nothing if it is not running.
    pub async fn stop(&self) -> Result<(), ProvisionError> {
        self.refuse_on_shared("stop")?;
        if self.inner.running.lock().expect("agent lock").is_none() {
            return Ok(());
        }
        self.inner.gates.pass(GatePoint::BeforeStop).await;
        self.stop_ungated().await
    }

    /// [`stop`](Self::stop), then [`start`](Self::start) on the same root.
    pub async fn restart(&self) -> Result<(), ProvisionError> {
        self.stop().await?;
        self.start().await
    }

    /// Stops the server and keeps its root after the scenario, even after a pass (its path is
    /// printed): for evidence a later look needs.
    pub async fn stop_and_retain(&self) -> Result<(), ProvisionError> {
        self.refuse_on_shared("stop_and_retain")?;
        self.inner.retain.store(true, Ordering::SeqCst);
        self.stop().await
    }

    /// The scenario's redactor (for the client and diagnostics).
    #[allow(dead_code)] // used by the client once wired
    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.inner.redactor
    }

    /// The scenario's gates (for the client).
    #[allow(dead_code)] // used by the client once wired
    pub(crate) fn gates(&self) -> &Arc<Gates> {
        &self.inner.gates
    }

    /// The owner mark every process of this agent carries.
    pub(crate) fn owner_token(&self) -> &str {
        match &self.inner.lease {
            Some(lease) => lease.server().agent().owner_token(),
            None => &self.inner.token,
        }
    }

    /// Ends a shared agent's lease (see [`Lease::release`]); nothing for an agent of its own.
    pub(crate) async fn release_lease(&self, passed: bool) {
        if let Some(lease) = &self.inner.lease {
            lease.release(passed, self.workspace()).await;
        }
    }

    /// Whether [`stop_and_retain`](Self::stop_and_retain) asked to keep the root.
    pub(crate) fn retained(&self) -> bool {
        self.inner.retain.load(Ordering::SeqCst)
    }

    /// Teardown's stop: no gate (an armed, never released gate must not hang teardown).
    pub(crate) async fn stop_ungated(&self) -> Result<(), ProvisionError> {
        let _op = self.inner.op.lock().await;
        let child = self.inner.running.lock().expect("agent lock").take();
        let Some(mut child) = child else {
            return Ok(());
        };
        let grace = crate::settings::scaled(STOP_GRACE);
        let ceiling = crate::settings::scaled(STOP_CEILING);
        match child.stop(grace, ceiling).await {
            Ok(report) => {
                self.inner.gates.count(Counter::ProcessExit);
                self.inner.log.mark(&format!(
                    "stopped: {}{}, {} stray process(es) killed",
                    report.status,
                    if report.escalated {
                        " after SIGKILL"
                    } else {
                        ""
                    },
                    report.swept
                ));
                Ok(())
            }
            Err(e) => Err(ProvisionError::Stop {
                message: self.inner.redactor.redact(&e.to_string()),
                log_tail: self.log_tail(FAILURE_TAIL),
            }),
        }
    }

    /// The synchronous fallback: SIGKILL, reap, sweep, without any runtime. A shared agent's
    /// server is not its own to kill: its lease is abandoned (the server retired) instead.
    pub(crate) fn kill_blocking(&self) {
        if let Some(lease) = &self.inner.lease {
            lease.abandon();
            return;
        }
        let child = self
            .inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        drop(child); // OwnedChild's Drop kills the group, reaps and sweeps
    }

    /// The command line for diagnostics: env values of secrets and the config hidden, paths
    /// redacted.
    fn command_line(&self, port: u16) -> String {
        let mut parts = Vec::new();
        for (name, value) in &self.inner.launch.env {
            let shown = if name == super::config::CONFIG_ENV {
                format!("<{} bytes of JSON>", value.len())
            } else if crate::redact::is_secret_name(name) {
                "[secret]".to_string()
            } else {
                value.clone()
            };
            parts.push(format!("{name}={shown}"));
        }
        parts.push(format!("{}=<owner mark>", process::OWNER_ENV));
        parts.push(self.inner.launch.program.display().to_string());
        parts.push(format!("serve --hostname 127.0.0.1 --port {port}"));
        self.inner.redactor.redact(&parts.join(" "))
    }

    fn register_port(&self, port: u16) {
        let mut known = self.inner.ports_registered.lock().expect("agent lock");
        if known.contains(&port) {
            return;
        }
        known.push(port);
        // `add_path` brackets its placeholder (`[127.0.0.1:[port-opencode]]`): ports have their
        // own API, which keeps `127.0.0.1:[port]` readable.
        self.inner.redactor.add_port(port);
    }

    fn open_log(&self, path: &Path) -> Result<std::fs::File, ProvisionError> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| ProvisionError::io("open the agent's log file", e))
    }

    async fn start_locked(&self) -> Result<(), ProvisionError> {
        let inner = &self.inner;
        {
            let mut running = inner.running.lock().expect("agent lock");
            if running.as_ref().is_some_and(|c| c.exit_status().is_none()) {
                return Ok(());
            }
            // An exited server: settle it (reaped already; its group and mark are swept). Its
            // exit was not seen by a stop, so it is counted here.
            if running.take().is_some() {
                inner.gates.count(Counter::ProcessExit);
            }
        }
        let mut previous = self.port();
        let mut attempt = 1;
        loop {
            let port = port::pick(previous).map_err(|e| ProvisionError::io("reserve a port", e))?;
            match self.start_on(port).await {
                Err(e) if attempt < port::ATTEMPTS && port_lost(&e, port) => {
                    inner.log.mark(&format!(
                        "127.0.0.1:{port} was taken before the server bound it: new port"
                    ));
                    previous = 0;
                    attempt += 1;
                }
                result => return result,
            }
        }
    }

    /// One start on `port`: spawn, then wait until ready.
    async fn start_on(&self, port: u16) -> Result<(), ProvisionError> {
        let inner = &self.inner;
        self.register_port(port);
        let command_line = self.command_line(port);

        let mut command = Command::new(&inner.launch.program);
        command
            .args([
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .current_dir(&inner.root.workspace);
        for name in inherited_to_remove() {
            command.env_remove(name);
        }
        command.envs(inner.launch.env.iter().map(|(k, v)| (k, v)));

        let stdout_log = self.open_log(&inner.root.stdout_log())?;
        let stderr_log = self.open_log(&inner.root.stderr_log())?;
        // Before the spawn: if the runner dies right after it, the reaper already knows the mark.
        process::register_token(&inner.token)
            .map_err(|e| ProvisionError::Reaper(inner.redactor.redact(&e.to_string())))?;
        inner.log.mark(&format!("start on 127.0.0.1:{port}"));
        let spawned =
            OwnedChild::spawn(command, &inner.token).map_err(|e| ProvisionError::Spawn {
                command: command_line.clone(),
                message: inner.redactor.redact(&e.to_string()),
            })?;
        let mut child = spawned.child;
        let (port_tx, port_rx) = watch::channel(None);
        let (out_done, mut out_drained) = watch::channel(false);
        let (err_done, mut err_drained) = watch::channel(false);
        logs::pump(
            spawned.stdout,
            stdout_log,
            inner.log.clone(),
            Some(port_tx),
            out_done,
        )
        .and_then(|()| {
            logs::pump(
                spawned.stderr,
                stderr_log,
                inner.log.clone(),
                None,
                err_done,
            )
        })
        .map_err(|e| ProvisionError::io("start the agent's log threads", e))?;

        let ceiling = crate::settings::scaled(inner.ready_timeout);
        match ready::wait_ready(&child, port_rx, &inner.http, ceiling).await {
            Ok(actual) => {
                self.register_port(actual);
                inner.port.store(actual, Ordering::SeqCst);
                *inner.running.lock().expect("agent lock") = Some(child);
                Ok(())
            }
            Err(not_ready) => {
                let _ = child
                    .stop(Duration::ZERO, crate::settings::scaled(STOP_CEILING))
                    .await;
                // The whole output, not what happened to be read when the exit was seen.
                let drained = async {
                    let _ = out_drained.wait_for(|d| *d).await;
                    let _ = err_drained.wait_for(|d| *d).await;
                };
                let _ = tokio::time::timeout(DRAIN_CEILING, drained).await;
                let log_tail = self.log_tail(FAILURE_TAIL);
                Err(match not_ready {
                    NotReady::Exited(status) => ProvisionError::ExitedBeforeReady {
                        status: status.to_string(),
                        command: command_line,
                        log_tail,
                    },
                    NotReady::Timeout(pending) => ProvisionError::NotReady {
                        pending: pending.to_string(),
                        waited: ceiling,
                        command: command_line,
                        log_tail,
                    },
                })
            }
        }
    }
}

/// Whether a failed start lost its port to another process (and so deserves a new port).
fn port_lost(error: &ProvisionError, port: u16) -> bool {
    matches!(error, ProvisionError::ExitedBeforeReady { .. }) && port::taken(port)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent whose "server" is `sh serve`, i.e. `script` written to `workspace/serve`.
    fn sh_agent(script: &str, ready_timeout: Duration) -> Agent {
        let root = AgentRoot::create("unit::agent").unwrap();
        let redactor = Arc::new(Redactor::for_scenario());
        root.register(&redactor, 1);
        let launch = Launch {
            program: PathBuf::from("sh"),
            env: vec![
                ("SCRIPT".into(), script.into()),
                ("API_KEY".into(), "hunter2-secret".into()),
            ],
        };
        redactor.add_secret("hunter2-secret");
        std::fs::write(root.workspace.join("serve"), script).unwrap();
        Agent::new(1, root, launch, ready_timeout, redactor, Arc::default())
    }

    #[tokio::test]
    async fn exit_before_ready_carries_status_and_redacted_log() {
        let agent = sh_agent("echo \"boom in $PWD\" >&2; exit 3", Duration::from_secs(30));
        let err = agent.start().await.unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, ProvisionError::ExitedBeforeReady { .. }),
            "{text}"
        );
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.contains("boom in [workspace]"), "{text}");
        assert!(text.contains("API_KEY=[secret]"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(
            !text.contains(&agent.root().display().to_string()),
            "{text}"
        );
        assert!(!agent.is_running());
        std::fs::remove_dir_all(agent.root()).unwrap();
    }

    /// `AgentOptions::env` goes through the same rule as the process environment: a variable
    /// named like a credential is hidden in the command line and its value redacted in the log.
    #[tokio::test]
    async fn a_credential_passed_as_agent_env_never_shows() {
        let canary = "canary-credential-7f3a";
        let script = "echo \"using $X_CREDENTIAL\" >&2; exit 3";
        let root = AgentRoot::create("unit::agent").unwrap();
        let redactor = Arc::new(Redactor::for_scenario());
        root.register(&redactor, 1);
        redactor.add_env("X_CREDENTIAL", canary);
        let launch = Launch {
            program: PathBuf::from("sh"),
            env: vec![("X_CREDENTIAL".into(), canary.into())],
        };
        std::fs::write(root.workspace.join("serve"), script).unwrap();
        let agent = Agent::new(
            1,
            root,
            launch,
            Duration::from_secs(30),
            redactor,
            Arc::default(),
        );
        let text = agent.start().await.unwrap_err().to_string();
        assert!(text.contains("X_CREDENTIAL=[secret]"), "{text}");
        assert!(text.contains("using [secret]"), "{text}");
        assert!(!text.contains(canary), "{text}");
        std::fs::remove_dir_all(agent.root()).unwrap();
    }

    #[tokio::test]
    async fn ceiling_names_the_pending_step_and_kills_the_process() {
        let agent = sh_agent("echo starting; exec sleep 600", Duration::from_millis(500));
        let err = agent.start().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ProvisionError::NotReady { .. }), "{text}");
        assert!(text.contains("listening on"), "{text}");
        assert!(text.contains("starting"), "{text}");
        let token = vec![agent.owner_token().to_string()];
        assert!(process::carriers(&token).is_empty());
        std::fs::remove_dir_all(agent.root()).unwrap();
    }
}
