//! What only ACP agents have, on each of them: the sandbox holding, a permission request held
//! at an `acp …` gate, and two faults: the connection dropped mid-turn, the prompt delayed past
//! its ceiling.

use std::time::Duration;

use harness_runtime::acp::{AcpAgent, AcpError, AcpPrompt};
use harness_runtime::any_agent::AnyAgent;
use harness_runtime::gates::AcpPoint;
use harness_runtime::prelude::*;

use super::tools;
use crate::support;

/// The tool results of the scenario's last model request, as JSON text: chat completions'
/// `tool` messages (OpenCode, Qwen Code), Gemini's `functionResponse` parts (Gemini CLI).
fn tool_results_sent_to_model(live: &Live) -> String {
    let Some(last) = live.model().requests().pop() else {
        return String::new();
    };
    let messages = last.raw["messages"].as_array().into_iter().flatten();
    let tool_messages = messages.filter(|m| m["role"] == "tool").cloned();
    let parts = last.raw["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().into_iter().flatten());
    let responses = parts.filter_map(|p| p.get("functionResponse")).cloned();
    let results: Vec<serde_json::Value> = tool_messages.chain(responses).collect();
    serde_json::Value::Array(results).to_string()
}

/// The scenario's agent, which its `agents` lists only ACP agents for.
async fn acp_agent(live: &mut Live, options: AgentOptions) -> anyhow::Result<AcpAgent> {
    match live.any_agent_with(options).await? {
        AnyAgent::Acp(agent) => Ok(agent),
        other => anyhow::bail!("{} is not an ACP agent: list ACP agents only", other.kind()),
    }
}

/// The agent runs confined like `opencode serve`: the model's shell command cannot read or
/// write a directory outside the scenario's root, nor connect to a loopback port that is not its
/// model's, while its work inside the workspace succeeds.
#[live_agent_test(timeout = "120s", agents = ["opencode-acp", "qwen-code", "gemini-cli"])]
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
         (exec 3<>/dev/tcp/127.0.0.1/{port}) || printf 'refused-%s\\n' 42",
        dir = outside.path().display()
    );
    live.model()
        .reply(tools::shell(
            live.any_agent_kind(),
            &command,
            "Try the sandbox",
        ))
        .reply(Reply::text("Tried."));
    // OpenCode's own guard off (no `external_directory` rule): what refuses is Landlock.
    let unguarded = AgentOptions::default().permission(json!({"*": "allow"}));
    let agent = acp_agent(live, unguarded).await?;
    let session = agent.new_session().await?;
    let turn = session.prompt("Try the sandbox").await?;
    anyhow::ensure!(
        turn.tool_calls().len() == 1,
        "expected one tool call, got {}",
        turn.tool_calls().len()
    );
    // What the command printed, as the agent gave it back to the model: every agent does, where
    // not every agent puts it in its tool call's update (Gemini CLI's is empty).
    let output = tool_results_sent_to_model(live);
    // `connect: Permission denied` is the kernel's refusal (EACCES), not a closed port: no TCP
    // leaves for any port but the model's, whatever the agent's telemetry would try. The last
    // line is put together by `printf`, so the command's own text cannot match it.
    for refused in [
        "Permission denied",
        "connect: Permission denied",
        "refused-42",
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
#[live_agent_test(timeout = "120s", agents = ["opencode-acp", "qwen-code", "gemini-cli"], gate = "acp before session/request_permission")]
async fn permission_held_at_a_gate(live: &mut Live) -> anyhow::Result<()> {
    let point = AcpPoint::parse("acp before session/request_permission")?;
    let gate = live
        .gates()
        .gate(point)
        .ok_or_else(|| anyhow::anyhow!("the attribute did not arm `{point}`"))?;
    live.model()
        .reply(tools::shell(
            live.any_agent_kind(),
            "echo ran > ran.txt",
            "Write ran.txt",
        ))
        .reply(Reply::text("Done."));
    let agent = acp_agent(live, support::asking_for(&["bash"])).await?;
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
#[live_agent_test(timeout = "120s", agents = ["opencode-acp", "qwen-code", "gemini-cli"])]
async fn connection_dropped_mid_turn(live: &mut Live) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = acp_agent(live, AgentOptions::default()).await?;
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
#[live_agent_test(timeout = "120s", agents = ["opencode-acp", "qwen-code", "gemini-cli"])]
async fn delayed_prompt_meets_its_ceiling(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Too late."));
    let agent = acp_agent(live, AgentOptions::default()).await?;
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
