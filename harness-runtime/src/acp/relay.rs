//! An ACP agent driven by the product, not by the harness: the product runs the agent command
//! the harness gives it (`acp-agent` in the root, the `acp-forward` helper), whose stdio reaches
//! this relay on loopback; the relay passes every line between it and the real agent through the
//! scenario's gates, counts it and logs it, as the harness's own connection does.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::task::JoinHandle;

use super::client_side::ClientSide;
use super::process::AcpProcess;
use super::traffic::Traffic;
use super::transport::ProtocolLog;
use super::{AcpAgentKind, AcpError};
use crate::gates::Gates;
use crate::opencode::{AgentRoot, StdioLaunch};
use crate::redact::Redactor;

/// The agent command's file name in the root.
const COMMAND: &str = "acp-agent";

/// An ACP agent a product drives through the harness's stdio forward.
#[derive(Clone)]
pub struct AcpRelay {
    inner: Arc<Inner>,
}

struct Inner {
    kind: AcpAgentKind,
    root: AgentRoot,
    process: AcpProcess,
    traffic: Arc<Traffic>,
    port: u16,
    command: PathBuf,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for AcpRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpRelay")
            .field("kind", &self.inner.kind)
            .finish_non_exhaustive()
    }
}

impl AcpRelay {
    /// Starts `launch` and a relay to it on a loopback port, and writes the agent command that
    /// reaches it. The relay serves one connection: one product's agent process.
    pub(crate) async fn start(
        kind: AcpAgentKind,
        launch: StdioLaunch,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Result<Self, AcpError> {
        let (process, pipes) = AcpProcess::spawn(&launch, redactor.clone())?;
        let failed = |message: String| AcpError::Spawn {
            command: process.command().to_string(),
            message,
        };
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| failed(format!("could not listen for its product: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| failed(format!("could not listen for its product: {e}")))?
            .port();
        redactor.add_port(port);
        let command = launch.root.root.join(COMMAND);
        write_command(&command, port)
            .map_err(|e| failed(format!("could not write its agent command: {e}")))?;
        let stdin = tokio::process::ChildStdin::from_std(pipes.stdin)
            .map_err(|e| failed(format!("could not attach to its pipes: {e}")))?;
        let stdout = tokio::process::ChildStdout::from_std(pipes.stdout)
            .map_err(|e| failed(format!("could not attach to its pipes: {e}")))?;
        let traffic = Arc::new(Traffic::new(
            gates,
            Arc::new(ClientSide::new(&launch.root.root)),
        ));
        let log = ProtocolLog::open(&launch.root.root);
        let task = tokio::spawn(relay(listener, stdin, stdout, traffic.clone(), log));
        Ok(Self {
            inner: Arc::new(Inner {
                kind,
                root: launch.root,
                process,
                traffic,
                port,
                command,
                task: Mutex::new(Some(task)),
            }),
        })
    }

    /// Which agent this is.
    pub fn kind(&self) -> AcpAgentKind {
        self.inner.kind
    }

    /// The agent command to give the product (also in its environment as
    /// `LIVE_ACP_AGENT_COMMAND`): an executable taking no arguments, whose stdio is the agent's.
    pub fn command(&self) -> &Path {
        &self.inner.command
    }

    /// The directory the agent works in (beneath its root): the product's sessions' `cwd`.
    pub fn workspace(&self) -> &Path {
        &self.inner.root.workspace
    }

    /// How many messages of each kind passed between the product and the agent (as
    /// [`AcpAgent::traffic`](super::AcpAgent::traffic) counts them).
    pub fn traffic(&self) -> std::collections::BTreeMap<String, u64> {
        self.inner.traffic.counts()
    }

    /// The loopback port the agent command connects to (the product's sandbox allows it).
    pub(crate) fn port(&self) -> u16 {
        self.inner.port
    }

    /// The agent's root: workspace, home, logs (`stderr.log`, `acp.log`).
    pub(crate) fn root(&self) -> &Path {
        &self.inner.root.root
    }

    pub(crate) fn stderr_tail(&self, n: usize) -> String {
        self.inner.process.stderr_tail(n)
    }

    /// Stops the agent (its whole group, swept) and the relay.
    pub(crate) async fn stop(&self) -> Result<(), AcpError> {
        let stopped = self.inner.process.stop().await;
        let task = self
            .inner
            .task
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(task) = task {
            task.abort();
        }
        stopped
    }

    pub(crate) fn kill_blocking(&self) {
        self.inner.process.kill_blocking();
    }

    /// A fault: drops the product's connection to the agent (both see their stream end).
    pub fn drop_connection(&self) {
        self.inner.traffic.drop_connection();
    }

    /// A fault: holds every later message of `method` (either direction) `by` before it
    /// passes; the error names an unknown method and the nearest ACP v1 method.
    pub fn delay(&self, method: &str, by: std::time::Duration) -> Result<(), AcpError> {
        self.inner
            .traffic
            .delay(super::traffic::method(method)?, by);
        Ok(())
    }
}

/// The agent command: this binary as the `acp-forward` helper, reaching `port`.
fn write_command(path: &Path, port: u16) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let (program, args) = crate::process::role_command()?;
    let quote = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    let mut line = format!(
        "{}={} {}=127.0.0.1:{port} exec {}",
        crate::settings::ROLE,
        crate::settings::Role::AcpForward.value(),
        crate::settings::ACP_FORWARD,
        quote(&program.display().to_string()),
    );
    for arg in &args {
        line.push(' ');
        line.push_str(&quote(arg));
    }
    std::fs::write(path, format!("#!/bin/sh\n{line}\n"))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

/// Accepts the product's one connection and copies lines both ways through `traffic` until
/// either side ends; the agent's stdin closes when the product's does.
async fn relay(
    listener: tokio::net::TcpListener,
    mut stdin: tokio::process::ChildStdin,
    stdout: tokio::process::ChildStdout,
    traffic: Arc<Traffic>,
    log: ProtocolLog,
) {
    let Ok((socket, _)) = listener.accept().await else {
        return;
    };
    drop(listener);
    let (from_product, mut to_product) = socket.into_split();
    let dropped = traffic.dropped();
    let to_agent = async {
        let mut lines = BufReader::new(from_product).lines();
        while let Some(line) = next_line(&mut lines, dropped.clone()).await {
            let answered = traffic.sending_to_agent(&line).await;
            log.line("→", &line);
            let written = async {
                stdin.write_all(line.as_bytes()).await?;
                stdin.write_all(b"\n").await?;
                stdin.flush().await
            };
            if written.await.is_err() {
                break;
            }
            if let Some(method) = answered {
                traffic.sent_to_agent(&method).await;
            }
        }
        drop(stdin);
    };
    let to_product = async {
        let mut lines = BufReader::new(stdout).lines();
        while let Some(line) = next_line(&mut lines, dropped.clone()).await {
            log.line("←", &line);
            traffic.received_from_agent(&line).await;
            let written = async {
                to_product.write_all(line.as_bytes()).await?;
                to_product.write_all(b"\n").await?;
                to_product.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
        let _ = to_product.shutdown().await;
    };
    tokio::join!(to_agent, to_product);
}

/// The next line, or `None` at the end, on an error, or once the connection was dropped.
async fn next_line<R: tokio::io::AsyncBufRead + Unpin>(
    lines: &mut tokio::io::Lines<R>,
    mut dropped: tokio::sync::watch::Receiver<bool>,
) -> Option<String> {
    tokio::select! {
        read = lines.next_line() => read.ok().flatten(),
        _ = dropped.wait_for(|dropped| *dropped) => None,
    }
}
