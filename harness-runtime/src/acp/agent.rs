//! An ACP agent a scenario holds: its process, its connection, and what it said at
//! `initialize`. Cheap to clone; the scenario's [`AcpSlot`](super::AcpSlot) stops it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, Implementation, InitializeRequest,
};
use agent_client_protocol::{Agent, JsonRpcRequest};
use serde_json::Value;

use super::client_side::ClientSide;
use super::connection::Connection;
use super::process::AcpProcess;
use super::traffic::Traffic;
use super::{AcpAgentKind, AcpError};
use crate::gates::Gates;
use crate::opencode::{AgentRoot, StdioLaunch};
use crate::redact::Redactor;

/// How long `initialize` and `session/new` may take (a cold start included), before scaling.
pub(super) const SETUP_CEILING: Duration = Duration::from_secs(60);
/// Stderr lines a failure message carries.
const FAILURE_TAIL: usize = 40;

/// An agent spoken to over ACP, in a root of its own.
#[derive(Clone)]
pub struct AcpAgent {
    inner: Arc<Inner>,
}

struct Inner {
    kind: AcpAgentKind,
    root: AgentRoot,
    process: AcpProcess,
    client_side: Arc<ClientSide>,
    traffic: Arc<Traffic>,
    connection: tokio::sync::Mutex<Option<Connection>>,
    to_agent: agent_client_protocol::v1::ConnectionTo<Agent>,
    /// The `initialize` answer, as the agent sent it.
    initialized: Value,
    redactor: Arc<Redactor>,
}

impl std::fmt::Debug for AcpAgent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AcpAgent")
            .field("kind", &self.inner.kind)
            .finish_non_exhaustive()
    }
}

impl AcpAgent {
    /// Starts `launch`, connects, and initializes (offering file reads and writes inside its
    /// root). A failure stops the process; the root stays for the slot to keep or remove.
    pub(crate) async fn start(
        kind: AcpAgentKind,
        launch: StdioLaunch,
        redactor: Arc<Redactor>,
        gates: Arc<Gates>,
    ) -> Result<Self, AcpError> {
        let (process, pipes) = AcpProcess::spawn(&launch, redactor.clone())?;
        let spawn_failed = |message: String| AcpError::Spawn {
            command: process.command().to_string(),
            message,
        };
        let client_side = Arc::new(ClientSide::new(&launch.root.root));
        let traffic = Arc::new(Traffic::new(gates, client_side.clone()));
        let transport = super::transport::lines(pipes, &launch.root.root, traffic.clone())
            .map_err(|e| spawn_failed(format!("could not attach to its pipes: {e}")))?;
        let Some(connection) = Connection::open(transport, client_side.clone()).await else {
            let _ = process.stop().await;
            return Err(spawn_failed(format!(
                "its output closed before the connection was up\nlast stderr lines:\n{}",
                process.stderr_tail(FAILURE_TAIL)
            )));
        };
        let to_agent = connection.to_agent.clone();
        let mut agent = Self {
            inner: Arc::new(Inner {
                kind,
                root: launch.root,
                process,
                client_side,
                traffic,
                connection: tokio::sync::Mutex::new(Some(connection)),
                to_agent,
                initialized: Value::Null,
                redactor,
            }),
        };
        // Gemini CLI 0.61 takes the not-found error of `fs/read_text_file` (its read of a file
        // it is about to create) for a failure and gives up the write: offered no file methods,
        // it reads and writes itself, confined to its root like the others' shell commands.
        let serves_files = kind != AcpAgentKind::GeminiCli;
        let capabilities = ClientCapabilities::new().fs(FileSystemCapabilities::new()
            .read_text_file(serves_files)
            .write_text_file(serves_files));
        let request = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(capabilities)
            .client_info(Implementation::new(
                "harness-runtime",
                env!("CARGO_PKG_VERSION"),
            ));
        let initialized = match agent.request(request, SETUP_CEILING).await {
            Ok(response) => serde_json::to_value(&response).unwrap_or(Value::Null),
            Err(e) => {
                let _ = agent.stop().await;
                return Err(e);
            }
        };
        Arc::get_mut(&mut agent.inner)
            .expect("not shared before it is returned")
            .initialized = initialized;
        Ok(agent)
    }

    /// Which agent this is.
    pub fn kind(&self) -> AcpAgentKind {
        self.inner.kind
    }

    /// What the agent answered at `initialize` (its `agentInfo`, `agentCapabilities`,
    /// `authMethods`), redacted.
    pub fn initialized(&self) -> Value {
        self.inner.redactor.redact_json(&self.inner.initialized)
    }

    /// Whether the agent advertised `capability` at `initialize`: a path into its
    /// `agentCapabilities`, e.g. `loadSession` or `promptCapabilities.image`.
    pub fn advertises(&self, capability: &str) -> bool {
        let mut value = &self.inner.initialized["agentCapabilities"];
        for key in capability.split('.') {
            value = &value[key];
        }
        !matches!(value, Value::Null | Value::Bool(false))
    }

    /// Sends `request` and waits for its answer up to `ceiling` (scaled); a failure names the
    /// method, the redacted request, and the agent's last stderr lines.
    pub(crate) async fn request<R>(
        &self,
        request: R,
        ceiling: Duration,
    ) -> Result<R::Response, AcpError>
    where
        R: JsonRpcRequest + serde::Serialize,
    {
        let method = request.method().to_string();
        let payload = self
            .inner
            .redactor
            .redact(&serde_json::to_string(&request).unwrap_or_default());
        let ceiling = crate::settings::scaled(ceiling);
        let mut exit = self.inner.process.exit_watch();
        let answer = self.inner.to_agent.send_request(request).block_task();
        let stderr_tail = || self.inner.process.stderr_tail(FAILURE_TAIL);
        tokio::select! {
            answer = answer => answer.map_err(|e| AcpError::Protocol {
                method: method.clone(),
                message: self.inner.redactor.redact(&e.to_string()),
                payload,
                stderr_tail: stderr_tail(),
            }),
            () = tokio::time::sleep(ceiling) => Err(AcpError::NoAnswer {
                method,
                waited: ceiling,
                pending: self.inner.redactor.redact(&self.inner.client_side.last_activity()),
                stderr_tail: stderr_tail(),
            }),
            status = exit.wait_for(Option::is_some) => Err(AcpError::Exited {
                method,
                status: match status {
                    Ok(status) => status.map(|s| s.to_string()).unwrap_or_default(),
                    Err(_) => "its exit was not seen".into(),
                },
                stderr_tail: stderr_tail(),
            }),
        }
    }

    pub(crate) fn client_side(&self) -> &ClientSide {
        &self.inner.client_side
    }

    pub(crate) fn to_agent(&self) -> &agent_client_protocol::v1::ConnectionTo<Agent> {
        &self.inner.to_agent
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.inner.redactor
    }

    /// How many messages of each kind passed between the harness and the agent, for the
    /// evidence: `→ session/prompt`, `← session/update tool_call`, `← answer session/prompt`,
    /// `→ answer session/request_permission`.
    pub fn traffic(&self) -> std::collections::BTreeMap<String, u64> {
        self.inner.traffic.counts()
    }

    /// A fault: drops the connection to the agent. Its output is no longer read and its input
    /// closes; a pending request fails (`AcpError::Protocol` or `Exited`, naming the method).
    pub fn drop_connection(&self) {
        self.inner.traffic.drop_connection();
    }

    /// A fault: holds every later message of `method` (either direction: `session/prompt`,
    /// `session/update`, `session/request_permission`) `by` before it passes; the error names
    /// an unknown method and the nearest ACP v1 method.
    pub fn delay(&self, method: &str, by: Duration) -> Result<(), AcpError> {
        self.inner
            .traffic
            .delay(super::traffic::method(method)?, by);
        Ok(())
    }

    /// The directory its sessions work in (beneath its root).
    pub fn workspace(&self) -> &Path {
        &self.inner.root.workspace
    }

    /// The agent's root: workspace, home, logs (`stderr.log`, `acp.log`).
    pub(crate) fn root(&self) -> &Path {
        &self.inner.root.root
    }

    /// The agent's last stderr lines, redacted.
    pub(crate) fn stderr_tail(&self, n: usize) -> String {
        self.inner.process.stderr_tail(n)
    }

    /// Closes the connection and stops the process (its whole group, swept).
    pub(crate) async fn stop(&self) -> Result<(), AcpError> {
        // The process first: closing its stdin while it runs is a shutdown it may not expect.
        let stopped = self.inner.process.stop().await;
        if let Some(connection) = self.inner.connection.lock().await.take() {
            connection.close().await;
        }
        stopped
    }

    /// The synchronous fallback when the scenario's runtime is gone.
    pub(crate) fn kill_blocking(&self) {
        self.inner.process.kill_blocking();
    }
}
