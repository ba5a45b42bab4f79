//! The cross-agent turns, one body each, on every agent: a text turn, a shell command approved
//! and one rejected, a cancel mid-turn, a multi-step plan, a file edit, and a closed session
//! (on the agents that advertise closing one). Their snapshots are the docs' table of agents.

use harness_runtime::any_agent::{AnyAgent, AnyAgentKind, AnyPrompt};
use harness_runtime::prelude::*;

use super::tools;
use crate::support;

#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn text_turn(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Hello over ACP."));
    let agent = live.any_agent().await?;
    // What an ACP agent says it is and can do at `initialize`: the docs' table reads it here.
    if let AnyAgent::Acp(acp) = &agent {
        let initialized = acp.initialized();
        anyhow::ensure!(
            initialized["agentInfo"]["name"].is_string(),
            "initialize answered no agent name: {initialized}"
        );
        live.evidence().record(
            "agent",
            json!({
                "name": initialized["agentInfo"]["name"],
                "version": initialized["agentInfo"]["version"],
                "capabilities": initialized["agentCapabilities"],
            }),
        );
    }
    let session = agent.new_session().await?;
    let turn = session.prompt("Say hello").await?;
    anyhow::ensure!(
        turn.stop_reason() == Some("end_turn"),
        "stopped: {:?}",
        turn.stop_reason()
    );
    anyhow::ensure!(
        turn.text() == "Hello over ACP.",
        "text was {:?}",
        turn.text()
    );
    live.evidence().record_turn_summary(turn.summary());
    live.assert_evidence();
    Ok(())
}

/// A shell command that asks, answered by `policy`; the file it writes exists exactly when the
/// permission was granted.
async fn shell_asking(live: &mut Live, policy: PermissionPolicy) -> anyhow::Result<()> {
    let kind = live.any_agent_kind();
    live.model()
        .reply(tools::shell(kind, "echo ran > ran.txt", "Write ran.txt"))
        .reply(Reply::text("Done."));
    let agent = live.any_agent_with(support::asking_for(&["bash"])).await?;
    let session = agent.new_session().await?;
    let turn = session
        .prompt_with(AnyPrompt::new("Write ran.txt").permissions(policy))
        .await?;
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
    live.evidence().record_turn_summary(summary);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn tool_call_approved(live: &mut Live) -> anyhow::Result<()> {
    shell_asking(live, PermissionPolicy::Once).await
}

#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn tool_call_rejected(live: &mut Live) -> anyhow::Result<()> {
    shell_asking(live, PermissionPolicy::Reject).await
}

#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn cancel_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.any_agent().await?;
    let session = agent.new_session().await?;
    let (turn, cancelled) = tokio::join!(session.prompt("Think about it"), async {
        // The model has the request: the turn is mid-reply.
        stall.reached().await?;
        anyhow::Ok(session.cancel().await?)
    });
    cancelled?;
    let turn = turn?;
    anyhow::ensure!(
        turn.stop_reason() == Some("cancelled"),
        "stopped: {:?}",
        turn.stop_reason()
    );
    live.evidence().record_turn_summary(turn.summary());
    live.assert_evidence();
    Ok(())
}

/// The model writes a three-step plan with the agent's todo tool; the turn's plan is those
/// steps with their statuses, as the agent reports them: ACP's `plan` update (Qwen Code), or
/// OpenCode's todo list over HTTP. OpenCode 1.18's ACP mode and Gemini CLI 0.61 send no `plan`
/// update, only the tool call: their plan is empty, and this fails the day they send one.
#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn multi_step_plan(live: &mut Live) -> anyhow::Result<()> {
    let kind = live.any_agent_kind();
    let steps = [
        ("Read the failing test", "completed"),
        ("Fix the parser", "in_progress"),
        ("Run the suite", "pending"),
    ];
    live.model()
        .reply(tools::plan(kind, &steps))
        .reply(Reply::text("Planned."));
    let agent = live.any_agent().await?;
    let session = agent.new_session().await?;
    let turn = session.prompt("Plan the fix").await?;
    let expected: Vec<String> = steps
        .iter()
        .map(|(content, status)| format!("{status}: {content}"))
        .collect();
    let reported = if matches!(kind, AnyAgentKind::OpenCodeAcp | AnyAgentKind::GeminiCli) {
        Vec::new()
    } else {
        expected
    };
    anyhow::ensure!(
        turn.summary().plan == reported,
        "the turn's plan was {:?}",
        turn.summary().plan
    );
    // Qwen Code reports its todo tool as the plan alone, the others as a tool call too.
    let calls = &turn.summary().tool_calls;
    anyhow::ensure!(
        calls.iter().all(|call| call.status == "completed"),
        "the todo tool's calls: {calls:?}"
    );
    live.evidence().record_turn_summary(turn.summary());
    live.assert_evidence();
    Ok(())
}

/// The model writes a file with the agent's own tool: it lands in the workspace, as written.
#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn file_edit(live: &mut Live) -> anyhow::Result<()> {
    let kind = live.any_agent_kind();
    let agent = live.any_agent().await?;
    let path = agent.workspace().join("notes.md");
    let content = "# Notes\n\nThe parser is fixed.\n";
    live.model()
        .reply(tools::write_file(
            kind,
            &path.display().to_string(),
            content,
        ))
        .reply(Reply::text("Written."));
    let session = agent.new_session().await?;
    let turn = session.prompt("Write the notes").await?;
    let written = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("notes.md was not written: {e}"))?;
    anyhow::ensure!(written == content, "notes.md holds {written:?}");
    live.evidence().record_turn_summary(turn.summary());
    live.assert_evidence();
    Ok(())
}

/// A session closed, and the agent still serving the next one: only on the agents that
/// advertise `sessionCapabilities.close` (Qwen Code does not: skipped, saying so).
#[live_agent_test(timeout = "120s", agents = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"])]
async fn session_closed(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.any_agent().await?;
    live.require_capability(&agent, "sessionCapabilities.close")?;
    live.model()
        .reply(Reply::text("First."))
        .reply(Reply::text("Second."));
    let first = agent.new_session().await?;
    let turn = first.prompt("Say first").await?;
    anyhow::ensure!(turn.text() == "First.", "text was {:?}", turn.text());
    first.close().await?;
    let second = agent.new_session().await?;
    let turn = second.prompt("Say second").await?;
    anyhow::ensure!(turn.text() == "Second.", "text was {:?}", turn.text());
    live.evidence().record_turn_summary(turn.summary());
    live.assert_evidence();
    Ok(())
}
