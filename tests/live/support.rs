//! Setup that scenarios of several topics share: agents whose permissions ask, prompts that
//! answer asks, and a policy that leaves a permission ask pending while telling the scenario
//! which one it was.

use std::time::Duration;

use harness_runtime::client::{Ask, AskAnswer, Session, Turn};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use tokio::sync::watch;

/// `permissions` ask before they run; everything else runs without asking, never outside the
/// workspace.
pub fn asking_for(permissions: &[&str]) -> AgentOptions {
    let mut rules = serde_json::Map::new();
    rules.insert("*".into(), json!("allow"));
    for permission in permissions {
        rules.insert((*permission).into(), json!("ask"));
    }
    rules.insert("external_directory".into(), json!("deny"));
    AgentOptions::default().permission(rules.into())
}

/// An agent whose bash asks, and a session on it; the model's first reply runs `command` in
/// bash, so the session's next prompt meets a permission ask.
pub async fn session_asking_to_run(
    live: &mut Live,
    command: &str,
    description: &str,
) -> anyhow::Result<(Agent, Session)> {
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": command, "description": description}),
    ));
    let agent = live.opencode_with(asking_for(&["bash"])).await?;
    let session = agent.create_session().await?;
    Ok((agent, session))
}

/// A prompt of `text` whose permission asks this client answers with `policy`.
pub fn prompt_answering(text: &str, policy: PermissionPolicy) -> Prompt {
    Prompt::new(text).asks(AskPolicy::leave_pending().permissions(policy))
}

/// Fails unless `turn` ended without an error.
pub fn no_error(turn: &Turn) -> anyhow::Result<()> {
    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    Ok(())
}

/// An ask policy that leaves every ask pending, and what it tells the scenario: for a scenario
/// that acts (aborts, replies late) while the permission waits.
pub fn leave_permission_pending() -> (AskPolicy, PendingPermission) {
    let (asked, id) = watch::channel(None::<String>);
    let policy = AskPolicy::leave_pending().callback(move |ask| {
        if let Ask::Permission(request) = ask {
            asked.send_replace(Some(request.id.clone()));
        }
        AskAnswer::LeavePending
    });
    (policy, PendingPermission { id })
}

/// The permission ask a [`leave_permission_pending`] policy left pending.
pub struct PendingPermission {
    id: watch::Receiver<Option<String>>,
}

impl PendingPermission {
    /// The id of the permission the agent asked for, once it asked, within `ceiling` (scaled by
    /// `LIVE_TIMEOUT_SCALE`).
    pub async fn id_within(&mut self, ceiling: Duration) -> anyhow::Result<String> {
        let ceiling = scaled(ceiling);
        let asked = tokio::time::timeout(ceiling, self.id.wait_for(Option::is_some))
            .await
            .map_err(|_| anyhow::anyhow!("no permission was asked within {ceiling:?}"))?
            .map_err(|_| anyhow::anyhow!("the turn ended without asking for a permission"))?;
        Ok(asked.clone().unwrap_or_default())
    }
}
