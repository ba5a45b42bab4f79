//! An agent of any kind, started for a scenario, and its sessions: one surface over OpenCode's
//! HTTP API and ACP, so one scenario body runs on every agent.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{AnyAgentError, AnyAgentKind, AnyTurn};
use crate::acp::{AcpAgent, AcpPrompt, AcpSession};
use crate::client::{AskPolicy, PermissionPolicy, Prompt, Session};
use crate::opencode::Agent;

/// How long a cancel waits for the turn's reply to be in flight over HTTP.
const CANCEL_CEILING: Duration = Duration::from_secs(60);

/// How often a cancel over HTTP looks for the reply's step.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// What `opencode serve` offers, in the terms of ACP's `agentCapabilities`: its HTTP API has no
/// handshake, and `opencode acp` of the same binary, which wraps the same server, advertises
/// this (a test holds the file to the `opencode-acp` snapshot).
fn opencode_http_capabilities() -> Value {
    serde_json::from_str(include_str!("opencode_http_capabilities.json")).expect("valid JSON")
}

/// The agent a scenario runs on, whatever its kind ([`Live::any_agent`](crate::Live::any_agent)).
/// Match it for what only one surface has.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AnyAgent {
    /// OpenCode's server over HTTP.
    OpenCodeHttp(Agent),
    /// An agent over ACP.
    Acp(AcpAgent),
}

impl AnyAgent {
    /// Which agent this is.
    pub fn kind(&self) -> AnyAgentKind {
        match self {
            Self::OpenCodeHttp(_) => AnyAgentKind::OpenCodeHttp,
            Self::Acp(agent) => match agent.kind() {
                crate::acp::AcpAgentKind::OpenCode => AnyAgentKind::OpenCodeAcp,
                crate::acp::AcpAgentKind::QwenCode => AnyAgentKind::QwenCode,
                crate::acp::AcpAgentKind::GeminiCli => AnyAgentKind::GeminiCli,
            },
        }
    }

    /// The directory its sessions work in.
    pub fn workspace(&self) -> &Path {
        match self {
            Self::OpenCodeHttp(agent) => agent.workspace(),
            Self::Acp(agent) => agent.workspace(),
        }
    }

    /// Its capabilities in ACP's terms (`agentCapabilities`): what an ACP agent advertised at
    /// `initialize`; for OpenCode over HTTP, what `opencode acp` of the same binary advertises.
    pub fn capabilities(&self) -> Value {
        match self {
            Self::OpenCodeHttp(_) => opencode_http_capabilities(),
            Self::Acp(agent) => agent.initialized()["agentCapabilities"].clone(),
        }
    }

    /// Whether it advertises `capability`, a path into [`capabilities`](Self::capabilities):
    /// `loadSession`, `promptCapabilities.image`, `sessionCapabilities.close`.
    pub fn advertises(&self, capability: &str) -> bool {
        let capabilities = self.capabilities();
        let mut value = &capabilities;
        for key in capability.split('.') {
            value = &value[key];
        }
        !matches!(value, Value::Null | Value::Bool(false))
    }

    /// Opens a session in its workspace.
    pub async fn new_session(&self) -> Result<AnySession, AnyAgentError> {
        Ok(match self {
            Self::OpenCodeHttp(agent) => {
                AnySession::OpenCodeHttp(Box::new(agent.create_session().await?))
            }
            Self::Acp(agent) => AnySession::Acp(agent.new_session().await?),
        })
    }
}

/// A prompt any agent takes: its text, how permission requests are answered, its ceiling.
#[derive(Clone, Debug)]
pub struct AnyPrompt {
    text: String,
    permissions: PermissionPolicy,
    ceiling: Option<Duration>,
}

impl AnyPrompt {
    /// A text prompt; permission requests are left pending.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            permissions: PermissionPolicy::default(),
            ceiling: None,
        }
    }

    /// Answers permission requests with `policy` (over ACP: the option of that kind).
    pub fn permissions(mut self, policy: PermissionPolicy) -> Self {
        self.permissions = policy;
        self
    }

    /// How long the turn may take (before `LIVE_TIMEOUT_SCALE`).
    pub fn ceiling(mut self, ceiling: Duration) -> Self {
        self.ceiling = Some(ceiling);
        self
    }
}

impl From<&str> for AnyPrompt {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

/// A session of an [`AnyAgent`].
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum AnySession {
    /// An OpenCode session over HTTP (boxed: it is the larger).
    OpenCodeHttp(Box<Session>),
    /// A session over ACP.
    Acp(AcpSession),
}

impl AnySession {
    /// Its id as the agent gave it (redacted in evidence).
    pub fn id(&self) -> &str {
        match self {
            Self::OpenCodeHttp(session) => session.id(),
            Self::Acp(session) => session.id(),
        }
    }

    /// Sends a text prompt and waits for its turn to end.
    pub async fn prompt(&self, text: impl Into<String>) -> Result<AnyTurn, AnyAgentError> {
        self.prompt_with(AnyPrompt::new(text)).await
    }

    /// Sends `prompt` and waits for its turn to end. Over HTTP the turn's plan is the
    /// session's todo list read after it.
    pub async fn prompt_with(&self, prompt: AnyPrompt) -> Result<AnyTurn, AnyAgentError> {
        match self {
            Self::OpenCodeHttp(session) => {
                let mut http = Prompt::new(prompt.text)
                    .asks(AskPolicy::leave_pending().permissions(prompt.permissions));
                if let Some(ceiling) = prompt.ceiling {
                    http = http.with_ceiling(ceiling);
                }
                let turn = session.prompt_with(http).await?;
                let plan = session
                    .client()
                    .todos(session.id())
                    .await?
                    .into_iter()
                    .map(|todo| format!("{}: {}", todo.status, todo.content))
                    .collect();
                Ok(AnyTurn::opencode(turn, plan))
            }
            Self::Acp(session) => {
                let mut acp = AcpPrompt::new(prompt.text).permissions(prompt.permissions);
                if let Some(ceiling) = prompt.ceiling {
                    acp = acp.ceiling(ceiling);
                }
                Ok(AnyTurn::acp(session.prompt_with(acp).await?))
            }
        }
    }

    /// Cancels the session's running turn: `session/cancel` over ACP; over HTTP, once the
    /// turn's reply step has opened (OpenCode aborts a turn before and after that differently,
    /// so it waits for one known state, at most a minute), `POST /session/{id}/abort`.
    pub async fn cancel(&self) -> Result<(), AnyAgentError> {
        match self {
            Self::OpenCodeHttp(session) => {
                let ceiling = crate::settings::scaled(CANCEL_CEILING);
                let started = Instant::now();
                while !reply_step_open(session).await? {
                    if started.elapsed() >= ceiling {
                        return Err(AnyAgentError::NothingToCancel {
                            agent: AnyAgentKind::OpenCodeHttp.name(),
                            ceiling,
                        });
                    }
                    tokio::time::sleep(CANCEL_POLL).await;
                }
                session.abort().await?;
                Ok(())
            }
            Self::Acp(session) => Ok(session.cancel()?),
        }
    }
}

impl AnySession {
    /// Closes the session: `session/close` over ACP (for an agent advertising
    /// `sessionCapabilities.close`), `DELETE /session/{id}` over HTTP.
    pub async fn close(&self) -> Result<(), AnyAgentError> {
        match self {
            Self::OpenCodeHttp(session) => {
                session.delete().await?;
                Ok(())
            }
            Self::Acp(session) => Ok(session.close().await?),
        }
    }
}

/// Whether the session's last message is a reply still being produced whose step has opened.
async fn reply_step_open(session: &Session) -> Result<bool, AnyAgentError> {
    let messages = session.messages().await?;
    Ok(messages.last().is_some_and(|m| {
        m.info.role == "assistant"
            && m.info.time.completed.is_none()
            && m.parts.iter().any(|p| p.kind == "step-start")
    }))
}
