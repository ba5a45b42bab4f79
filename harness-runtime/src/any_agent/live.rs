//! The scenario's side: starting the agent a cross-agent scenario runs on.

use super::{AnyAgent, AnyAgentError, AnyAgentKind};
use crate::opencode::AgentOptions;
use crate::{Live, Skipped};

impl Live {
    /// Which agent this scenario runs on: the one its `agents = [...]` entry names (a scenario
    /// listing three agents is three scenarios, `…::opencode_http`, `…::opencode_acp`,
    /// `…::qwen_code`), or OpenCode over HTTP when it lists none.
    pub fn any_agent_kind(&self) -> AnyAgentKind {
        self.options()
            .any_agent()
            .unwrap_or(AnyAgentKind::OpenCodeHttp)
    }

    /// Starts the agent this scenario runs on ([`any_agent_kind`](Self::any_agent_kind)):
    /// [`opencode`](Self::opencode) for OpenCode over HTTP, [`acp_agent`](Self::acp_agent)
    /// for an ACP agent, with their rules (a missing program skips the scenario, failed under
    /// `CI`/`LIVE_STRICT=1`).
    pub async fn any_agent(&mut self) -> Result<AnyAgent, AnyAgentError> {
        self.any_agent_with(AgentOptions::default()).await
    }

    /// [`any_agent`](Self::any_agent) with explicit options. The `permission` rules apply to
    /// every agent as each understands them (Qwen Code asks by mode: any `ask` rule makes it
    /// ask before edits and shell commands); an OpenCode `config` only to OpenCode.
    pub async fn any_agent_with(
        &mut self,
        options: AgentOptions,
    ) -> Result<AnyAgent, AnyAgentError> {
        match self.any_agent_kind().acp() {
            None => Ok(AnyAgent::OpenCodeHttp(self.opencode_with(options).await?)),
            Some(kind) => Ok(AnyAgent::Acp(self.acp_agent_with(kind, options).await?)),
        }
    }

    /// Skips the scenario, saying so, unless `agent` advertises `capability` (a path into its
    /// [`capabilities`](AnyAgent::capabilities), e.g. `sessionCapabilities.close`): a scenario
    /// about a capability neither passes nor fails on an agent without it.
    /// `live.require_capability(&agent, "loadSession")?;`
    pub fn require_capability(
        &mut self,
        agent: &AnyAgent,
        capability: &str,
    ) -> Result<(), Skipped> {
        if agent.advertises(capability) {
            Ok(())
        } else {
            Err(self.skip(format!(
                "{} does not advertise `{capability}` at initialize",
                agent.kind()
            )))
        }
    }
}
