//! Qwen Code (`qwen --acp`, pinned in package.json), its model the scripted model as an
//! OpenAI-compatible endpoint.

use harness_runtime::acp::AcpAgentKind::QwenCode;
use harness_runtime::prelude::*;

use super::acp_bodies as bodies;

#[live_agent_test(timeout = "120s")]
async fn text_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::text_turn(live, QwenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_approved(live: &mut Live) -> anyhow::Result<()> {
    bodies::shell_asking(live, QwenCode, PermissionPolicy::Once).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_rejected(live: &mut Live) -> anyhow::Result<()> {
    bodies::shell_asking(live, QwenCode, PermissionPolicy::Reject).await
}

#[live_agent_test(timeout = "120s")]
async fn cancel_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::cancel_mid_turn(live, QwenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn confined_to_its_root(live: &mut Live) -> anyhow::Result<()> {
    bodies::confined_to_its_root(live, QwenCode).await
}

#[live_agent_test(timeout = "120s", gate = "acp before session/request_permission")]
async fn permission_held_at_a_gate(live: &mut Live) -> anyhow::Result<()> {
    bodies::permission_held_at_a_gate(live, QwenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn connection_dropped_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    bodies::connection_dropped_mid_turn(live, QwenCode).await
}

#[live_agent_test(timeout = "120s")]
async fn delayed_prompt_meets_its_ceiling(live: &mut Live) -> anyhow::Result<()> {
    bodies::delayed_prompt_meets_its_ceiling(live, QwenCode).await
}
