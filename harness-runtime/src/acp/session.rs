//! A session on an ACP agent: prompts and their turns, and cancelling one.

use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, ContentBlock, NewSessionRequest, PromptRequest,
    TextContent,
};

use super::{AcpAgent, AcpError, AcpTurn};
use crate::client::{DEFAULT_TURN_CEILING, PermissionPolicy};

/// How long the SDK may take to dispatch the updates read before a turn's answer.
const DISPATCH_CEILING: Duration = Duration::from_secs(5);

/// A prompt: its text, how permission requests are answered while it runs, its ceiling.
#[derive(Clone, Debug)]
pub struct AcpPrompt {
    text: String,
    permissions: PermissionPolicy,
    ceiling: Option<Duration>,
}

impl AcpPrompt {
    /// A text prompt; permission requests are left pending (like an OpenCode prompt).
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            permissions: PermissionPolicy::default(),
            ceiling: None,
        }
    }

    /// Answers `session/request_permission` with the option of this policy's kind
    /// (`allow_once`, `allow_always`, `reject_once`), chosen by kind, never by position.
    pub fn permissions(mut self, policy: PermissionPolicy) -> Self {
        self.permissions = policy;
        self
    }

    /// How long the turn may take (before `LIVE_TIMEOUT_SCALE`); default
    /// [`DEFAULT_TURN_CEILING`].
    pub fn ceiling(mut self, ceiling: Duration) -> Self {
        self.ceiling = Some(ceiling);
        self
    }
}

// Here rather than in agent.rs: the agent is below its sessions.
impl AcpAgent {
    /// Opens a session in the agent's workspace, with no MCP servers.
    pub async fn new_session(&self) -> Result<AcpSession, AcpError> {
        let request = NewSessionRequest::new(self.workspace().to_path_buf());
        let response = self.request(request, super::agent::SETUP_CEILING).await?;
        // Its id (`ses_…`, a UUID) is redacted as every id is.
        Ok(AcpSession::new(
            self.clone(),
            response.session_id.to_string(),
        ))
    }
}

/// A session of an [`AcpAgent`].
#[derive(Clone, Debug)]
pub struct AcpSession {
    agent: AcpAgent,
    id: String,
}

impl AcpSession {
    pub(crate) fn new(agent: AcpAgent, id: String) -> Self {
        Self { agent, id }
    }

    /// The session's id as the agent gave it (redacted in evidence).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Sends a text prompt and waits for its turn to end.
    pub async fn prompt(&self, text: impl Into<String>) -> Result<AcpTurn, AcpError> {
        self.prompt_with(AcpPrompt::new(text)).await
    }

    /// Sends `prompt` and waits for its turn to end (`session/prompt` answered); the turn holds
    /// every update and permission request of this session that came meanwhile.
    pub async fn prompt_with(&self, prompt: AcpPrompt) -> Result<AcpTurn, AcpError> {
        let client_side = self.agent.client_side();
        client_side.set_policy(&self.id, prompt.permissions);
        // Cut where the agent's output was read up to: updates it sent before this prompt (a
        // session's `available_commands_update`) are not the turn's, whenever they dispatch.
        let (updates_from, asks_from) = (client_side.updates_read(), client_side.ask_count());
        let request = PromptRequest::new(
            self.id.clone(),
            vec![ContentBlock::Text(TextContent::new(prompt.text))],
        );
        crate::timeline::note(crate::timeline::Lane::Turn, "session/prompt", || {
            self.agent.kind().to_string()
        });
        let response = self
            .agent
            .request(request, prompt.ceiling.unwrap_or(DEFAULT_TURN_CEILING))
            .await?;
        // Everything the agent sent before its answer is the turn's: wait for its dispatch.
        let read = client_side.updates_read();
        client_side
            .dispatched(read, crate::settings::scaled(DISPATCH_CEILING))
            .await;
        let stop_reason = serde_json::to_value(response.stop_reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        crate::timeline::note(crate::timeline::Lane::Turn, "turn ended", || {
            stop_reason.clone()
        });
        Ok(AcpTurn {
            updates: client_side.updates_since(&self.id, updates_from),
            asks: client_side.asks_since(&self.id, asks_from),
            stop_reason,
        })
    }

    /// Sends `session/cancel`: the running turn ends with stop reason `cancelled`.
    pub fn cancel(&self) -> Result<(), AcpError> {
        self.agent
            .to_agent()
            .send_notification(CancelNotification::new(self.id.clone()))
            .map_err(|e| AcpError::Protocol {
                method: "session/cancel".into(),
                message: self.agent.redactor().redact(&e.to_string()),
                payload: String::new(),
                stderr_tail: self.agent.stderr_tail(20),
            })
    }

    /// Closes the session (`session/close`), for an agent that advertises
    /// `sessionCapabilities.close`; one that does not is refused before anything is sent.
    pub async fn close(&self) -> Result<(), AcpError> {
        if !self.agent.advertises("sessionCapabilities.close") {
            return Err(AcpError::Unsupported {
                agent: self.agent.kind().name(),
                what: "it does not advertise `sessionCapabilities.close`: check \
                       `advertises(\"sessionCapabilities.close\")` first"
                    .into(),
            });
        }
        let request = CloseSessionRequest::new(self.id.clone());
        self.agent
            .request(request, super::agent::SETUP_CEILING)
            .await?;
        Ok(())
    }
}
