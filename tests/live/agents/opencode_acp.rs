//! OpenCode's own ACP mode (`opencode acp`, the pinned binary).

use harness_runtime::acp::AcpAgentKind::OpenCode;
use harness_runtime::prelude::*;

use super::acp_bodies as bodies;

#[live_agent_test(timeout = "120s")]
async fn text_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::text_turn(live, OpenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_approved(live: &mut Live) -> anyhow::Result<()> {
    bodies::shell_asking(live, OpenCode, PermissionPolicy::Once).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_rejected(live: &mut Live) -> anyhow::Result<()> {
    bodies::shell_asking(live, OpenCode, PermissionPolicy::Reject).await
}

#[live_agent_test(timeout = "120s")]
async fn cancel_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::cancel_mid_turn(live, OpenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn confined_to_its_root(live: &mut Live) -> anyhow::Result<()> {
    bodies::confined_to_its_root(live, OpenCode).await
}

#[live_agent_test(timeout = "120s", gate = "acp before session/request_permission")]
async fn permission_held_at_a_gate(live: &mut Live) -> anyhow::Result<()> {
    bodies::permission_held_at_a_gate(live, OpenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn connection_dropped_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::connection_dropped_mid_turn(live, OpenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn delayed_prompt_meets_its_ceiling(live: &mut Live) -> anyhow::Result<()> {
    bodies::delayed_prompt_meets_its_ceiling(live, OpenCode).await
}
