//! OpenCode over HTTP (`opencode serve`): the turns the ACP agents run, through the typed client.

use harness_runtime::prelude::*;

use crate::support::{self, no_error, prompt_answering};

#[live_agent_test(timeout = "120s")]
async fn text_turn(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Hello over ACP."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Say hello").await?;
    no_error(&turn)?;
    anyhow::ensure!(turn.text == "Hello over ACP.", "text was {:?}", turn.text);
    live.evidence().record_turn(&turn);
    live.assert_evidence();
    Ok(())
}

/// A bash call that asks, answered by `policy`; the file it writes exists exactly when the
/// permission was granted.
async fn shell_asking(live: &mut Live, policy: PermissionPolicy) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo ran > ran.txt", "description": "Write ran.txt"}),
        ))
        .reply(Reply::text("Done."));
    let agent = live.opencode_with(support::asking_for(&["bash"])).await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(prompt_answering("Write ran.txt", policy))
        .await?;
    anyhow::ensure!(
        turn.interactions.len() == 1,
        "permission requests: {:?}",
        turn.interactions
    );
    let ran = agent.workspace().join("ran.txt").exists();
    anyhow::ensure!(
        ran == (policy != PermissionPolicy::Reject),
        "ran.txt exists: {ran}, under {policy:?}"
    );
    live.evidence().record_turn(&turn);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_approved(live: &mut Live) -> anyhow::Result<()> {
    shell_asking(live, PermissionPolicy::Once).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_rejected(live: &mut Live) -> anyhow::Result<()> {
    shell_asking(live, PermissionPolicy::Reject).await
}

#[live_agent_test(timeout = "120s")]
async fn cancel_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let mut events = agent.client().subscribe().await?;
    let (turn, aborted) = tokio::join!(session.prompt("Think about it"), async {
        stall.reached().await?;
        // Aborting before or after the reply's step opened is a race: abort in one known state.
        crate::abort::wait_for_step_start(&mut events, session.id()).await?;
        anyhow::Ok(session.abort().await?)
    });
    let (turn, aborted) = (turn?, aborted?);
    anyhow::ensure!(aborted, "the abort answered false");
    live.evidence().record_turn(&turn);
    live.assert_evidence();
    Ok(())
}
