//! Exploring orderings against real OpenCode: the framework's own client, pointed at the
//! agent's forwarded URL, is the product; the scheduler orders its requests, the agent's
//! responses and the events its stream delivers. A turn whose ask the product answers ends the
//! same whatever the order, so every explored schedule must record the same evidence.

use harness_runtime::client::Client;
use harness_runtime::prelude::*;

use crate::support::{asking_for, no_error, prompt_answering};

/// The model runs bash, which asks; the product approves it once. Explored at random over every
/// request, response and session event: each schedule completes the turn, and the agent's side
/// of it (the observer's record) is the same in every one (the snapshot).
#[live_agent_test(timeout = "120s", explore = 4)]
async fn an_answered_ask_ends_the_same_in_every_explored_order(
    live: &mut Live,
) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo explored > explored.txt", "description": "Write a file"}),
        ))
        .reply(Reply::text("Written."));
    let agent = live.opencode_with(asking_for(&["bash"])).await?;
    let product = Client::new(agent.forwarded_url(), live.redactor().clone());
    let session = product
        .create_session(&CreateSession::titled("explored"))
        .await?;
    let turn = session
        .prompt_with(prompt_answering(
            "Write explored.txt",
            PermissionPolicy::Once,
        ))
        .await?;
    no_error(&turn)?;
    anyhow::ensure!(
        std::fs::read_to_string(agent.workspace().join("explored.txt"))? == "explored\n",
        "the approved command did not run"
    );
    let observed = agent.observed().await;
    live.evidence().record_observed(&observed);
    live.assert_evidence();
    Ok(())
}
