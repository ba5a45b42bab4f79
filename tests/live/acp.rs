//! OpenCode spoken to over ACP (`opencode acp`, the pinned binary) with the scripted model: the
//! same turns as over HTTP, summarised in the same evidence shape.

use harness_runtime::acp::{AcpAgentKind, AcpPrompt};
use harness_runtime::prelude::*;

use crate::support;

#[live_agent_test(timeout = "120s")]
async fn text_turn(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Hello over ACP."));
    let agent = live.acp_agent(AcpAgentKind::OpenCode).await?;
    anyhow::ensure!(
        agent.initialized()["agentInfo"]["name"] == "OpenCode",
        "initialize answered {}",
        agent.initialized()
    );
    let session = agent.new_session().await?;
    let turn = session.prompt("Say hello").await?;
    anyhow::ensure!(
        turn.stop_reason() == "end_turn",
        "stopped: {}",
        turn.stop_reason()
    );
    anyhow::ensure!(
        turn.text() == "Hello over ACP.",
        "text was {:?}",
        turn.text()
    );
    live.evidence().record_turn_summary(&turn.summary());
    live.assert_evidence();
    Ok(())
}

/// A bash call that asks, answered by `policy`; returns the turn's summary after checking the
/// file the command writes exists exactly when the permission was granted.
async fn bash_asking(live: &mut Live, policy: PermissionPolicy) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo ran > ran.txt", "description": "Write ran.txt"}),
        ))
        .reply(Reply::text("Done."));
    let agent = live
        .acp_agent_with(AcpAgentKind::OpenCode, support::asking_for(&["bash"]))
        .await?;
    let session = agent.new_session().await?;
    let turn = session
        .prompt_with(AcpPrompt::new("Write ran.txt").permissions(policy))
        .await?;
    anyhow::ensure!(
        turn.stop_reason() == "end_turn",
        "stopped: {}",
        turn.stop_reason()
    );
    let summary = turn.summary();
    anyhow::ensure!(
        summary.interactions.len() == 1,
        "permission requests: {:?}",
        summary.interactions
    );
    let ran = agent.workspace().join("ran.txt").exists();
    anyhow::ensure!(
        ran == (policy != PermissionPolicy::Reject),
        "ran.txt exists: {ran}, under {policy:?}"
    );
    live.evidence().record_turn_summary(&summary);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_approved(live: &mut Live) -> anyhow::Result<()> {
    bash_asking(live, PermissionPolicy::Once).await
}

#[live_agent_test(timeout = "120s")]
async fn tool_call_rejected(live: &mut Live) -> anyhow::Result<()> {
    bash_asking(live, PermissionPolicy::Reject).await
}

#[live_agent_test(timeout = "120s")]
async fn cancel_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.acp_agent(AcpAgentKind::OpenCode).await?;
    let session = agent.new_session().await?;
    let (turn, cancelled) = tokio::join!(session.prompt("Think about it"), async {
        // The model has the request: the turn is mid-reply.
        stall.reached().await?;
        anyhow::Ok(session.cancel()?)
    });
    cancelled?;
    let turn = turn?;
    anyhow::ensure!(
        turn.stop_reason() == "cancelled",
        "stopped: {}",
        turn.stop_reason()
    );
    live.evidence().record_turn_summary(&turn.summary());
    live.assert_evidence();
    Ok(())
}

/// `opencode acp` runs confined like `opencode serve`: the model's bash command cannot read or
/// write a directory outside the scenario's root, nor connect to a loopback port that is not its
/// model's, while its work inside the workspace succeeds.
#[live_agent_test(timeout = "120s")]
async fn confined_to_its_root(live: &mut Live) -> anyhow::Result<()> {
    if !live.sandboxed() {
        return Err(live
            .skip("agents run unconfined here (LIVE_SANDBOX=0, or no Landlock)")
            .into());
    }
    let outside = tempfile::Builder::new()
        .prefix("live-acp-outside-")
        .tempdir()?;
    live.redactor().add_path(outside.path(), "[outside]");
    std::fs::write(outside.path().join("secret.txt"), "planted")?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    live.redactor().add_port(port);
    let command = format!(
        "echo inside > inside.txt; cat {dir}/secret.txt; echo x > {dir}/new.txt; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) || echo connect refused",
        dir = outside.path().display()
    );
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": command, "description": "Try the sandbox"}),
        ))
        .reply(Reply::text("Tried."));
    // OpenCode's own guard off (no `external_directory` rule): what refuses is Landlock.
    let unguarded = AgentOptions::default().permission(json!({"*": "allow"}));
    let agent = live
        .acp_agent_with(AcpAgentKind::OpenCode, unguarded)
        .await?;
    let session = agent.new_session().await?;
    let turn = session.prompt("Try the sandbox").await?;
    let [call] = turn
        .tool_calls()
        .try_into()
        .map_err(|calls: Vec<_>| anyhow::anyhow!("expected one tool call, got {}", calls.len()))?;
    let output = call["rawOutput"]["output"].as_str().unwrap_or_default();
    for refused in ["Permission denied", "connect refused"] {
        anyhow::ensure!(
            output.contains(refused),
            "the command's output does not say {refused:?}: {}",
            live.redactor().redact(output)
        );
    }
    anyhow::ensure!(!output.contains("planted"), "the secret was read");
    let left: Vec<_> = std::fs::read_dir(outside.path())?.collect();
    anyhow::ensure!(left.len() == 1, "the outside directory changed: {left:?}");
    anyhow::ensure!(
        agent.workspace().join("inside.txt").exists(),
        "the work inside its workspace did not happen"
    );
    Ok(())
}
