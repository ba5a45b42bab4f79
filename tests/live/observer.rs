//! The observer against real OpenCode: what the agent did for a product (here a client of the
//! agent's forwarded URL, as a product's own client is) is recorded whole, in a turn's form,
//! though the product's own event stream dropped mid-turn; a restart leaves a gap the record
//! names, and the sessions on both sides of it.

use std::time::Duration;

use harness_runtime::client::Session;
use harness_runtime::client::{Client, Event};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;

use crate::support::{asking_for, prompt_answering};

/// The product's own client, on the URL a product is given.
fn product(live: &Live, agent: &Agent) -> Client {
    Client::new(agent.forwarded_url(), live.redactor().clone())
}

/// What a product whose stream dropped mid-turn does: subscribes again and, when the session
/// is still busy, waits for its `session.idle`.
async fn wait_idle_on_a_new_stream(client: &Client, session: &Session) -> anyhow::Result<()> {
    let mut events = client.subscribe().await?;
    if !client.statuses().await?.contains_key(session.id()) {
        return Ok(());
    }
    let idle = async {
        while let Some(event) = events.next_event().await? {
            if matches!(&event, Event::SessionIdle { session_id } if session_id == session.id()) {
                return Ok(());
            }
        }
        anyhow::bail!("the product's new stream ended before the session was idle")
    };
    tokio::time::timeout(scaled(Duration::from_secs(60)), idle).await?
}

/// The model runs bash, which asks; the product replies `once`, and its event stream is
/// dropped right before the `permission.replied` reaches it. The observer's record has the
/// whole turn: the ask and its reply, the tool completed, the final text.
#[live_agent_test(timeout = "150s")]
async fn a_products_turn_is_observed_whole_though_its_stream_dropped(
    live: &mut Live,
) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo observed > observed.txt", "description": "Write a file"}),
        ))
        .reply(Reply::text("Written."));
    let agent = live.opencode_with(asking_for(&["bash"])).await?;
    let client = product(live, &agent);
    let session = client
        .create_session(&CreateSession::titled("product"))
        .await?;
    live.wire().drop_event_stream_at("permission.replied", 1)?;

    let dropped = session
        .prompt_with(prompt_answering(
            "Write observed.txt",
            PermissionPolicy::Once,
        ))
        .await;
    anyhow::ensure!(
        matches!(dropped, Err(ClientError::StreamEnded { .. })),
        "the product's stream was not dropped: {dropped:?}"
    );
    wait_idle_on_a_new_stream(&client, &session).await?;

    let observed = agent.observed().await;
    anyhow::ensure!(observed.gaps.is_empty(), "{:?}", observed.gaps);
    live.evidence().record_observed(&observed);
    live.assert_evidence();
    Ok(())
}

/// A session before a restart and one after it, both through the product's URL (which stays
/// the same): the record has both, in creation order, and says events across the restart may
/// be missing.
// A server of its own: it restarts its server.
#[live_agent_test(timeout = "180s", isolation = "server")]
async fn a_restart_is_a_gap_the_record_names(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::text("Before."))
        .reply(Reply::text("After."));
    let agent = live.opencode().await?;
    let client = product(live, &agent);
    let before = client
        .create_session(&CreateSession::titled("before"))
        .await?;
    anyhow::ensure!(before.prompt("Say before").await?.text == "Before.");

    agent.restart().await?;
    let after = client
        .create_session(&CreateSession::titled("after"))
        .await?;
    anyhow::ensure!(after.prompt("Say after").await?.text == "After.");

    live.evidence().record_observed(&agent.observed().await);
    live.assert_evidence();
    Ok(())
}
