//! The scenario bodies every ACP agent runs: a text turn, a shell command approved and one
//! rejected, a cancel mid-turn, the sandbox holding, a permission request held at a gate, and
//! two faults: the connection dropped mid-turn, the prompt delayed past its ceiling. Each takes the agent's kind; what
//! differs between agents (their shell tool's name and arguments) is said here once.

use std::time::Duration;

use harness_runtime::acp::{AcpAgentKind, AcpError, AcpPrompt};
use harness_runtime::gates::AcpPoint;
use harness_runtime::prelude::*;

use crate::support;

/// The model's call of `kind`'s shell tool running `command`.
fn shell_call(kind: AcpAgentKind, command: &str, description: &str) -> Reply {
    match kind {
        AcpAgentKind::QwenCode => Reply::tool_call(
            "run_shell_command",
            json!({"command": command, "description": description, "is_background": false}),
        ),
        _ => Reply::tool_call(
            "bash",
            json!({"command": command, "description": description}),
        ),
    }
}

pub(super) async fn text_turn(live: &mut Live, kind: AcpAgentKind) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Hello over ACP."));
    let agent = live.acp_agent(kind).await?;
    anyhow::ensure!(
        agent.initialized()["agentInfo"]["name"].is_string(),
        "initialize answered no agent name: {}",
        agent.initialized()
    );
    // What it says it is and can do: the docs' table of agents reads it from the snapshot.
    let initialized = agent.initialized();
    live.evidence().record(
        "agent",
        json!({
            "name": initialized["agentInfo"]["name"],
            "version": initialized["agentInfo"]["version"],
            "capabilities": initialized["agentCapabilities"],
        }),
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

/// A shell command that asks, answered by `policy`; the file it writes exists exactly when the
/// permission was granted.
pub(super) async fn shell_asking(
    live: &mut Live,
    kind: AcpAgentKind,
    policy: PermissionPolicy,
) -> anyhow::Result<()> {
    live.model()
        .reply(shell_call(kind, "echo ran > ran.txt", "Write ran.txt"))
        .reply(Reply::text("Done."));
    let agent = live
        .acp_agent_with(kind, support::asking_for(&["bash"]))
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

pub(super) async fn cancel_mid_turn(live: &mut Live, kind: AcpAgentKind) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.acp_agent(kind).await?;
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

/// The agent runs confined like `opencode serve`: the model's shell command cannot read or
/// write a directory outside the scenario's root, nor connect to a loopback port that is not its
/// model's, while its work inside the workspace succeeds.
pub(super) async fn confined_to_its_root(
    live: &mut Live,
    kind: AcpAgentKind,
) -> anyhow::Result<()> {
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
        .reply(shell_call(kind, &command, "Try the sandbox"))
        .reply(Reply::text("Tried."));
    // OpenCode's own guard off (no `external_directory` rule): what refuses is Landlock.
    let unguarded = AgentOptions::default().permission(json!({"*": "allow"}));
    let agent = live.acp_agent_with(kind, unguarded).await?;
    let session = agent.new_session().await?;
    let turn = session.prompt("Try the sandbox").await?;
    let [call] = turn
        .tool_calls()
        .try_into()
        .map_err(|calls: Vec<_>| anyhow::anyhow!("expected one tool call, got {}", calls.len()))?;
    let output = serde_json::to_string(&call)?;
    // `connect: Permission denied` is the kernel's refusal (EACCES), not a closed port: no TCP
    // leaves for any port but the model's, whatever the agent's telemetry would try.
    for refused in [
        "Permission denied",
        "connect: Permission denied",
        "connect refused",
    ] {
        anyhow::ensure!(
            output.contains(refused),
            "the command's output does not say {refused:?}: {}",
            live.redactor().redact(&output)
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

/// The agent's permission request held at `acp before session/request_permission` (armed by
/// the scenario's attribute): while it is held the command has not run; released, it is
/// answered and runs. The turn's traffic, counted by kind, is part of the evidence.
pub(super) async fn permission_held_at_a_gate(
    live: &mut Live,
    kind: AcpAgentKind,
) -> anyhow::Result<()> {
    let point = AcpPoint::parse("acp before session/request_permission")?;
    let gate = live
        .gates()
        .gate(point)
        .ok_or_else(|| anyhow::anyhow!("the attribute did not arm `{point}`"))?;
    live.model()
        .reply(shell_call(kind, "echo ran > ran.txt", "Write ran.txt"))
        .reply(Reply::text("Done."));
    let agent = live
        .acp_agent_with(kind, support::asking_for(&["bash"]))
        .await?;
    let session = agent.new_session().await?;
    let ran = agent.workspace().join("ran.txt");
    let (turn, held) = tokio::join!(
        session.prompt_with(AcpPrompt::new("Write ran.txt").permissions(PermissionPolicy::Once)),
        async {
            gate.wait_until_entered_within(scaled(Duration::from_secs(60)))
                .await?;
            let early = ran.exists();
            gate.release();
            anyhow::ensure!(
                !early,
                "the command ran while its permission request was held"
            );
            anyhow::Ok(())
        }
    );
    held?;
    let turn = turn?;
    anyhow::ensure!(ran.exists(), "the command did not run once released");
    live.evidence().record_turn_summary(&turn.summary());
    live.evidence().record("traffic", agent.traffic());
    live.assert_evidence();
    Ok(())
}

/// A fault: the connection dropped while the model is answering. The prompt fails at once,
/// naming `session/prompt`, instead of waiting out its ceiling.
pub(super) async fn connection_dropped_mid_turn(
    live: &mut Live,
    kind: AcpAgentKind,
) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.acp_agent(kind).await?;
    let session = agent.new_session().await?;
    let ceiling = Duration::from_secs(60);
    let started = std::time::Instant::now();
    let (turn, dropped) = tokio::join!(
        session.prompt_with(AcpPrompt::new("Think about it").ceiling(ceiling)),
        async {
            stall.reached().await?;
            agent.drop_connection();
            anyhow::Ok(())
        }
    );
    dropped?;
    let error = match turn {
        Ok(turn) => anyhow::bail!(
            "the turn ended ({}) after its connection was dropped",
            turn.stop_reason()
        ),
        Err(error) => error,
    };
    anyhow::ensure!(
        !matches!(error, AcpError::NoAnswer { .. }),
        "the prompt waited out its ceiling: {error}"
    );
    anyhow::ensure!(
        error.to_string().contains("session/prompt"),
        "the error does not name the method: {error}"
    );
    anyhow::ensure!(
        started.elapsed() < scaled(ceiling),
        "took {:?}",
        started.elapsed()
    );
    Ok(())
}

/// A fault: `session/prompt` held longer than the prompt's ceiling. The turn fails at its
/// ceiling, naming the method and what the agent was doing; a misspelt method is refused.
pub(super) async fn delayed_prompt_meets_its_ceiling(
    live: &mut Live,
    kind: AcpAgentKind,
) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Too late."));
    let agent = live.acp_agent(kind).await?;
    let misspelt = agent
        .delay("session/promt", Duration::from_secs(1))
        .unwrap_err();
    anyhow::ensure!(
        misspelt
            .to_string()
            .contains("the nearest is `session/prompt`"),
        "{misspelt}"
    );
    let session = agent.new_session().await?;
    agent.delay("session/prompt", scaled(Duration::from_secs(5)))?;
    let turn = session
        .prompt_with(AcpPrompt::new("Say it").ceiling(Duration::from_secs(1)))
        .await;
    match turn {
        Err(error @ AcpError::NoAnswer { .. }) => anyhow::ensure!(
            error.to_string().contains("`session/prompt`"),
            "the error does not name the method: {error}"
        ),
        Err(other) => anyhow::bail!("expected the ceiling, got: {other}"),
        Ok(turn) => anyhow::bail!("the delayed turn ended: {}", turn.stop_reason()),
    }
    Ok(())
}
