//! One agent server process (`opencode serve`, or the fixture agent): spawn, readiness, stop,
//! port, log and owner mark. Whose it is (a scenario's own, or the pool's shared one) is decided
//! by the holder: [`Agent`](super::Agent) or the [shared pool](super::pool).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use super::ProvisionError;
use super::logs::{self, ServerLog};
use super::options::DEFAULT_STOP_GRACE;
use super::port;
use super::ready::{self, NotReady};
use super::root::AgentRoot;
use crate::gates::{Counter, Gates};
use crate::process::{self, OwnedChild};
use crate::redact::Redactor;
use crate::sandbox::{self, Policy, SpawnError};

/// How long the reap may take after SIGKILL.
const STOP_CEILING: Duration = Duration::from_secs(10);
/// How long diagnostics wait for the output pipes to drain after an exit.
const DRAIN_CEILING: Duration = Duration::from_secs(2);
/// Log lines a failure message carries.
const FAILURE_TAIL: usize = 40;
/// The log mark that begins each start: a start's own output is what follows the last one.
const START_MARK: &str = "start on";

/// The program and environment of an agent; the same spawn path serves OpenCode and the fixture.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    /// Set after the inherited environment was cleaned, in order (later entries win).
    pub(crate) env: Vec<(String, String)>,
}

/// A server process on one root, started and stopped any number of times. Dropping it kills a
/// running process synchronously ([`OwnedChild`]'s `Drop`).
pub(crate) struct ServerProcess {
    root: AgentRoot,
    launch: Launch,
    /// The sandbox every start confines the server to (its own port added); `None`: unconfined.
    sandbox: Option<Policy>,
    token: String,
    ready_ceiling: Duration,
    /// Between SIGTERM and SIGKILL, before scaling.
    stop_grace: Duration,
    redactor: Arc<Redactor>,
    /// Where process exits are counted.
    gates: Arc<Gates>,
    log: Arc<ServerLog>,
    port: AtomicU16,
    ports_registered: Mutex<Vec<u16>>,
    running: Mutex<Option<OwnedChild>>,
    /// Whether the last start's output was read to the end.
    drained: Mutex<Option<logs::Drained>>,
    /// Serializes start and stop.
    op: tokio::sync::Mutex<()>,
    http: reqwest::Client,
}

impl ServerProcess {
    /// A server of `launch` in `root`, not started yet. Its diagnostics pass through
    /// `redactor`; its exits are counted on `gates`.
    pub(crate) fn new(
        root: AgentRoot,
        launch: Launch,
        ready_ceiling: Duration,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Self {
        Self {
            root,
            launch,
            sandbox: None,
            token: process::new_token(),
            ready_ceiling,
            stop_grace: DEFAULT_STOP_GRACE,
            redactor,
            gates,
            log: Arc::default(),
            port: AtomicU16::new(0),
            ports_registered: Mutex::default(),
            running: Mutex::default(),
            drained: Mutex::default(),
            op: tokio::sync::Mutex::new(()),
            http: crate::client::loopback_http_client(),
        }
    }

    /// Stops wait `grace` (before scaling) between SIGTERM and SIGKILL.
    pub(crate) fn with_stop_grace(mut self, grace: Duration) -> Self {
        self.stop_grace = grace;
        self
    }

    /// Confines every start of the server, and every process it starts, to `policy` (plus the
    /// port it listens on), through the sandbox launcher.
    pub(crate) fn confined(mut self, policy: Policy) -> Self {
        self.sandbox = Some(policy);
        self
    }

    /// The root the server runs in (its workspace is the working directory, its logs are here).
    pub(crate) fn root(&self) -> &AgentRoot {
        &self.root
    }

    pub(crate) fn program(&self) -> &Path {
        &self.launch.program
    }

    /// The redactor of its diagnostics.
    pub(crate) fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// Where its exits are counted.
    pub(crate) fn gates(&self) -> &Arc<Gates> {
        &self.gates
    }

    /// The loopback port the server listens on (0 before the first start).
    pub(crate) fn port(&self) -> u16 {
        self.port.load(Ordering::SeqCst)
    }

    /// The base URL, e.g. `http://127.0.0.1:41234` (the last one, while stopped).
    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// The owner mark every process of this server carries.
    pub(crate) fn owner_token(&self) -> &str {
        &self.token
    }

    /// The pid while the process runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        let running = self.running.lock().expect("server lock");
        running
            .as_ref()
            .filter(|c| c.exit_status().is_none())
            .map(OwnedChild::pid)
    }

    pub(crate) fn is_running(&self) -> bool {
        self.pid().is_some()
    }

    /// Waits up to `ceiling` (already scaled) for the started process to exit on its own (a crash,
    /// an injected fault), then for its output to be read to the end: the log tail holds its last
    /// lines once this returns. Diagnostics pass through `redactor`, whoever reads them.
    pub(crate) async fn wait_exit(
        &self,
        ceiling: Duration,
        redactor: &Redactor,
    ) -> Result<ExitStatus, ProvisionError> {
        let (mut exit, drained) = {
            let running = self.running.lock().expect("server lock");
            let child = running.as_ref().ok_or(ProvisionError::NoProcess)?;
            let drained = self.drained.lock().expect("server lock").clone();
            (child.exit_watch(), drained)
        };
        let Ok(Some(status)) = tokio::time::timeout(ceiling, ready::exited(&mut exit)).await else {
            return Err(ProvisionError::StillRunning {
                waited: ceiling,
                log_tail: redactor.redact(&self.log.tail(FAILURE_TAIL)),
            });
        };
        if let Some(drained) = drained {
            drained.wait(DRAIN_CEILING).await;
        }
        Ok(status)
    }

    /// Whether a started process was not stopped yet (it may have exited on its own).
    pub(crate) fn holds_process(&self) -> bool {
        self.running.lock().expect("server lock").is_some()
    }

    /// The last `n` lines of stdout and stderr as written: the caller redacts them with the
    /// redactor of whoever reads them (a shared server's scenarios each have their own).
    pub(crate) fn unredacted_log_tail(&self, n: usize) -> String {
        self.log.tail(n)
    }

    fn log_tail(&self, n: usize) -> String {
        self.redactor.redact(&self.log.tail(n))
    }

    /// Starts the server (again) on the same root. Keeps the previous port when it is still
    /// free. Does nothing if running.
    pub(crate) async fn start(&self) -> Result<(), ProvisionError> {
        let _op = self.op.lock().await;
        {
            let mut running = self.running.lock().expect("server lock");
            if running.as_ref().is_some_and(|c| c.exit_status().is_none()) {
                return Ok(());
            }
            // An exited server: settle it (reaped already; its group and mark are swept). Its
            // exit was not seen by a stop, so it is counted here.
            if running.take().is_some() {
                self.gates.count(Counter::ProcessExit);
            }
        }
        let mut previous = self.port();
        let mut attempt = 1;
        loop {
            let port = port::pick(previous).map_err(|e| ProvisionError::io("reserve a port", e))?;
            let result = self.start_on(port).await;
            if !self.lost_its_port(&result) {
                return result;
            }
            if attempt == port::ATTEMPTS {
                return Err(ProvisionError::PortLost {
                    attempts: attempt,
                    command: self.command_line(port),
                    log_tail: self.log_tail(FAILURE_TAIL),
                });
            }
            self.log.mark(&format!(
                "attempt {attempt} of {}: 127.0.0.1:{port} was taken before the server bound it \
                 (its output says the address is in use): new port",
                port::ATTEMPTS
            ));
            previous = 0;
            attempt += 1;
        }
    }

    /// Whether a start failed because its address was in use, as the exit and that start's own
    /// output say. Not a later probe: the holder (often a connection of this very process) may
    /// be gone by the time anyone looks.
    fn lost_its_port(&self, result: &Result<(), ProvisionError>) -> bool {
        matches!(result, Err(ProvisionError::ExitedBeforeReady { .. }))
            && port::output_says_address_in_use(&self.log.since_mark(START_MARK))
    }

    /// SIGTERM → bounded wait → SIGKILL → reap → kills every process that still carries the
    /// owner mark (detached tool commands). Does nothing if it is not running. No gate: the
    /// holder decides whether a stop is gated.
    pub(crate) async fn stop(&self) -> Result<(), ProvisionError> {
        let _op = self.op.lock().await;
        let child = self.running.lock().expect("server lock").take();
        let Some(mut child) = child else {
            return Ok(());
        };
        let grace = crate::settings::scaled(self.stop_grace);
        let ceiling = crate::settings::scaled(STOP_CEILING);
        match child.stop(grace, ceiling).await {
            Ok(report) => {
                self.gates.count(Counter::ProcessExit);
                crate::timeline::note(crate::timeline::Lane::Teardown, "stopped", || {
                    report.to_string()
                });
                self.log.mark(&format!(
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
                message: self.redactor.redact(&e.to_string()),
                log_tail: self.log_tail(FAILURE_TAIL),
            }),
        }
    }

    /// The synchronous fallback: SIGKILL, reap, sweep, without any runtime.
    pub(crate) fn kill_blocking(&self) {
        let child = self
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
        for (name, value) in &self.launch.env {
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
        parts.push(self.launch.program.display().to_string());
        parts.push(format!("serve --hostname 127.0.0.1 --port {port}"));
        self.redactor.redact(&parts.join(" "))
    }

    fn register_port(&self, port: u16) {
        let mut known = self.ports_registered.lock().expect("server lock");
        if known.contains(&port) {
            return;
        }
        known.push(port);
        // `add_path` brackets its placeholder (`[127.0.0.1:[port-opencode]]`): ports have their
        // own API, which keeps `127.0.0.1:[port]` readable.
        self.redactor.add_port(port);
    }

    fn open_log(&self, path: &Path) -> Result<std::fs::File, ProvisionError> {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| ProvisionError::io("open the agent's log file", e))
    }

    /// One start on `port`: spawn, then wait until ready.
    async fn start_on(&self, port: u16) -> Result<(), ProvisionError> {
        self.register_port(port);
        let command_line = self.command_line(port);

        let spawn_error = |message: String| ProvisionError::Spawn {
            command: command_line.clone(),
            message: self.redactor.redact(&message),
        };
        let stdout_log = self.open_log(&self.root.stdout_log())?;
        let stderr_log = self.open_log(&self.root.stderr_log())?;
        self.log.mark(&format!("{START_MARK} 127.0.0.1:{port}"));
        let start = sandbox::Start {
            program: self.launch.program.clone(),
            args: [
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ]
            .map(OsString::from)
            .to_vec(),
            current_dir: self.root.workspace.clone(),
            env: (self.launch.env.iter())
                .map(|(name, value)| (name.into(), Some(value.into())))
                .collect(),
            confined: self.sandbox.clone().map(|mut policy| {
                policy.allow_connect(port);
                policy
            }),
            token: self.token.clone(),
        };
        let spawned = start.spawn().map_err(|e| match e {
            SpawnError::Reaper(e) => ProvisionError::Reaper(self.redactor.redact(&e.to_string())),
            e => spawn_error(e.to_string()),
        })?;
        crate::timeline::note(crate::timeline::Lane::Provisioning, "spawn", || {
            command_line.clone()
        });
        let mut child = spawned.child;
        let (port_tx, port_rx) = watch::channel(None);
        let drained = logs::pump_output(
            (spawned.stdout, stdout_log),
            (spawned.stderr, stderr_log),
            &self.log,
            port_tx,
        )
        .map_err(|e| ProvisionError::io("start the agent's log threads", e))?;
        *self.drained.lock().expect("server lock") = Some(drained.clone());

        let ceiling = crate::settings::scaled(self.ready_ceiling);
        match ready::wait_ready(&child, port_rx, &self.http, ceiling).await {
            Ok(actual) => {
                self.register_port(actual);
                crate::timeline::note(crate::timeline::Lane::Provisioning, "ready", || {
                    format!("127.0.0.1:{actual}")
                });
                self.port.store(actual, Ordering::SeqCst);
                *self.running.lock().expect("server lock") = Some(child);
                Ok(())
            }
            Err(not_ready) => {
                let _ = child
                    .stop(Duration::ZERO, crate::settings::scaled(STOP_CEILING))
                    .await;
                // The whole output, not what happened to be read when the exit was seen.
                drained.wait(DRAIN_CEILING).await;
                let log_tail = self.log_tail(FAILURE_TAIL);
                crate::timeline::note(crate::timeline::Lane::Provisioning, "not ready", || {
                    format!("{not_ready:?}")
                });
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

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;
    use std::time::Instant;

    use tokio::io::AsyncReadExt;

    use super::*;

    /// A server that is `sh serve`, i.e. `script` written to `workspace/serve`, with `env`.
    fn sh_server(
        script: &str,
        env: Vec<(String, String)>,
        redactor: Arc<Redactor>,
    ) -> ServerProcess {
        sh_server_within(script, env, redactor, Duration::from_secs(30))
    }

    fn sh_server_within(
        script: &str,
        env: Vec<(String, String)>,
        redactor: Arc<Redactor>,
        ready_ceiling: Duration,
    ) -> ServerProcess {
        let root = AgentRoot::create("unit::server").unwrap();
        root.register(&redactor, 1);
        std::fs::write(root.workspace.join("serve"), script).unwrap();
        let launch = Launch {
            program: PathBuf::from("sh"),
            env,
        };
        ServerProcess::new(root, launch, ready_ceiling, redactor, Arc::default())
    }

    #[tokio::test]
    async fn exit_before_ready_carries_status_and_redacted_log() {
        let redactor = Arc::new(Redactor::for_scenario());
        redactor.add_secret("hunter2-secret");
        let script = "echo \"boom in $PWD\" >&2; exit 3";
        let env = vec![
            ("SCRIPT".into(), script.into()),
            ("API_KEY".into(), "hunter2-secret".into()),
        ];
        let server = sh_server(script, env, redactor);
        let err = server.start().await.unwrap_err();
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
            !text.contains(&server.root().root.display().to_string()),
            "{text}"
        );
        assert!(!server.is_running());
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    /// `AgentOptions::env` goes through the same rule as the process environment: a variable
    /// named like a credential is hidden in the command line and its value redacted in the log.
    #[tokio::test]
    async fn a_credential_passed_as_agent_env_never_shows() {
        let canary = "canary-credential-7f3a";
        let redactor = Arc::new(Redactor::for_scenario());
        redactor.add_env("X_CREDENTIAL", canary);
        let env = vec![("X_CREDENTIAL".into(), canary.into())];
        let server = sh_server("echo \"using $X_CREDENTIAL\" >&2; exit 3", env, redactor);
        let text = server.start().await.unwrap_err().to_string();
        assert!(text.contains("X_CREDENTIAL=[secret]"), "{text}");
        assert!(text.contains("using [secret]"), "{text}");
        assert!(!text.contains(canary), "{text}");
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    #[tokio::test]
    async fn ceiling_names_the_pending_step_and_kills_the_process() {
        let server = sh_server_within(
            "echo starting; exec sleep 600",
            Vec::new(),
            Arc::new(Redactor::for_scenario()),
            Duration::from_millis(500),
        );
        let err = server.start().await.unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ProvisionError::NotReady { .. }), "{text}");
        assert!(text.contains("listening on"), "{text}");
        assert!(text.contains("starting"), "{text}");
        let token = vec![server.owner_token().to_string()];
        assert!(process::carriers(&token).is_empty());
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    /// `wait_exit` returns once the exit is seen and the output is read to the end: a last line
    /// written after the leader exited, by a child still holding its stderr, is in the tail. A
    /// server that keeps running ends the wait at its ceiling, with its log; a stopped one has
    /// nothing to wait for.
    #[tokio::test]
    async fn wait_exit_returns_with_the_last_lines_in_the_tail() {
        // The script's readiness: its listening line names this health route's port.
        let health = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .unwrap();
        let health_port = health.local_addr().unwrap().port();
        let app = axum::Router::new().route("/global/health", axum::routing::get(|| async {}));
        let serving = tokio::spawn(async move { axum::serve(health, app).await });
        let script = "echo \"opencode server listening on http://127.0.0.1:$HEALTH_PORT\"; \
                      while [ ! -e exit.now ]; do sleep 0.01; done; \
                      (sleep 0.3; echo 'last words' >&2) & exit 7";
        let redactor = Arc::new(Redactor::for_scenario());
        let env = vec![("HEALTH_PORT".into(), health_port.to_string())];
        let server = sh_server(script, env, redactor.clone());
        server.start().await.unwrap();

        let err = server
            .wait_exit(Duration::from_millis(200), &redactor)
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ProvisionError::StillRunning { .. }), "{text}");
        assert!(text.contains("listening on"), "{text}");
        assert!(server.is_running());

        std::fs::write(server.root().workspace.join("exit.now"), "").unwrap();
        let status = server
            .wait_exit(Duration::from_secs(20), &redactor)
            .await
            .unwrap();
        assert_eq!(status.code(), Some(7));
        let tail = server.unredacted_log_tail(5);
        assert!(tail.ends_with("last words"), "{tail}");

        server.stop().await.unwrap();
        let err = server
            .wait_exit(Duration::from_secs(20), &redactor)
            .await
            .unwrap_err();
        assert!(matches!(err, ProvisionError::NoProcess), "{err}");
        serving.abort();
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    /// Waits (with a ceiling) for `path` to exist and returns its text.
    async fn appeared(path: &Path) -> String {
        let deadline = Instant::now() + Duration::from_secs(20);
        while !path.exists() {
            assert!(
                Instant::now() < deadline,
                "{} never appeared",
                path.display()
            );
            // Written by another process (the script): a bounded poll, no signal reaches here.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        std::fs::read_to_string(path).unwrap()
    }

    /// The port a start was given is taken by an outgoing connection while the server
    /// binds, and the connection is gone before anyone checks. The server's own output is the
    /// only witness, and the start must be retried on a new port. The first start writes its
    /// port, the test holds that port with a connected socket, proves a bind fails, hands the
    /// real error to the server (which prints it in the fixture agent's words and exits), and
    /// closes the connection before the start returns; the second start exits with status 3.
    #[tokio::test]
    async fn a_port_lost_to_a_connection_gone_before_the_check_is_retried_on_a_new_port() {
        let script = "if [ ! -e first.port ]; then \
                          echo \"$4\" > first.tmp && mv first.tmp first.port; \
                          while [ ! -e bind.error ]; do sleep 0.01; done; \
                          cat bind.error >&2; exit 1; \
                      fi; echo \"$4\" > second.port; echo second start >&2; exit 3";
        let server = sh_server(script, Vec::new(), Arc::new(Redactor::for_scenario()));
        let workspace = server.root().workspace.clone();
        let hold_then_release = async {
            let first: u16 = appeared(&workspace.join("first.port"))
                .await
                .trim()
                .parse()
                .unwrap();
            // An outgoing connection from the port, like the harness's own health polls.
            let peer = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
                .await
                .unwrap();
            let socket = tokio::net::TcpSocket::new_v4().unwrap();
            socket.bind((Ipv4Addr::LOCALHOST, first).into()).unwrap();
            let connection = socket.connect(peer.local_addr().unwrap()).await.unwrap();
            let (accepted, _) = peer.accept().await.unwrap();
            let bind_error = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, first))
                .expect_err("a port held by a connection cannot be bound");
            assert_eq!(bind_error.kind(), std::io::ErrorKind::AddrInUse);
            // The far end closes first (as a server closing a keep-alive connection does), so
            // the wait after the close stays there and the port itself is free again at once.
            drop(accepted);
            let mut connection = connection;
            let mut rest = Vec::new();
            connection.read_to_end(&mut rest).await.unwrap();
            drop((connection, peer));
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, first)).is_err() {
                assert!(
                    Instant::now() < deadline,
                    "the holder is gone before the check"
                );
                // The kernel frees the port: a bounded poll, no signal reaches here.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            let message =
                format!("fixture agent: cannot listen on the requested port: {bind_error}");
            std::fs::write(workspace.join("bind.tmp"), message).unwrap();
            std::fs::rename(workspace.join("bind.tmp"), workspace.join("bind.error")).unwrap();
            first
        };
        let (result, first) = tokio::time::timeout(Duration::from_secs(30), async {
            tokio::join!(server.start(), hold_then_release)
        })
        .await
        .expect("the start ends");
        let err = result.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exit status: 3"), "{text}");
        let second: u16 = std::fs::read_to_string(workspace.join("second.port"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert_ne!(second, first);
        let log = server.unredacted_log_tail(50);
        assert!(
            log.contains(&format!(
                "attempt 1 of {}: 127.0.0.1:{first} was taken before the server bound it",
                port::ATTEMPTS
            )),
            "{log}"
        );
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    /// A start that loses its port every time gives up after a bound, naming every attempt.
    #[tokio::test]
    async fn ports_lost_every_time_end_in_a_diagnostic_naming_each_attempt() {
        let script = "echo \"error: listen EADDRINUSE: address already in use 127.0.0.1:$4\" >&2; \
                      exit 1";
        let server = sh_server(script, Vec::new(), Arc::new(Redactor::for_scenario()));
        let err = server.start().await.unwrap_err();
        let text = err.to_string();
        assert!(
            matches!(err, ProvisionError::PortLost { attempts, .. } if attempts == port::ATTEMPTS),
            "{text}"
        );
        for attempt in 1..port::ATTEMPTS {
            assert!(
                text.contains(&format!(
                    "attempt {attempt} of {}: 127.0.0.1:[port] was taken",
                    port::ATTEMPTS
                )),
                "{text}"
            );
        }
        assert_eq!(
            text.matches("--- start on 127.0.0.1:[port]").count(),
            port::ATTEMPTS,
            "{text}"
        );
        assert!(!server.is_running());
        std::fs::remove_dir_all(&server.root().root).unwrap();
    }

    /// The path provisioning takes: a confined server starts through the sandbox launcher, works
    /// in its root, is refused outside it, and leaves no carrier of its mark behind.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_confined_server_is_refused_outside_its_root() {
        let sandbox = crate::sandbox::current().unwrap_or_else(|failure| panic!("{failure}"));
        let missing = (!sandbox.is_on()).then(|| {
            format!(
                "this test needs the agent's sandbox: {}",
                sandbox.line(None)
            )
        });
        if !crate::settings::unit_test_runs(missing) {
            return;
        }
        let outside = tempfile::tempdir().unwrap();
        let escaped = outside.path().join("escaped.txt");
        let script = format!(
            "echo in > inside.txt && echo out > {}; exit 3",
            escaped.display()
        );
        let server = sh_server(&script, Vec::new(), Arc::new(Redactor::for_scenario()));
        let root = server.root().root.clone();
        let mut policy = Policy::system();
        policy.allow_write(&root);
        let server = server.confined(policy);
        let text = server.start().await.unwrap_err().to_string();
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.contains("Permission denied"), "{text}");
        assert_eq!(
            std::fs::read_to_string(root.join("workspace/inside.txt")).unwrap(),
            "in\n"
        );
        assert!(!escaped.exists());
        let token = vec![server.owner_token().to_string()];
        assert!(process::carriers(&token).is_empty());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
