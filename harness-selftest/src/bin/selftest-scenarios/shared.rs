//! Shared isolation (`LIVE_ISOLATION=shared`), driven by `tests/shared.rs` with one trial at a
//! time: `first` and `second` lease the same server yet each sees only its own sessions and runs
//! its tools in its own workspace; `own` refuses sharing (`isolation = "server"`) and gets a
//! server of its own. Each records `<label> <server pid>` in the scratch dir. `first` ends with
//! an ask left unanswered, which the pool rejects at release: `second` gets the workspace warm.

use std::time::Duration;

use harness_runtime::client::{Prompt, ToolStatus};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{record_owned, record_pid};

/// The shared scenarios' policy (one config, so they share a warm workspace): everything
/// allowed but [`PENDING`], which asks.
fn policy() -> serde_json::Value {
    json!({
        "*": "allow",
        "external_directory": "deny",
        "bash": {"*": "allow", "echo pending*": "ask"},
    })
}

/// The command `first` is left asking about.
const PENDING: &str = "echo pending";

/// One turn whose bash tool writes the directory it ran in to `where.txt`; then the checks every
/// shared scenario makes: the tool ran in this scenario's workspace, and the server lists this
/// scenario's session alone.
async fn turn_in_own_directory(live: &mut Live, label: &str) -> anyhow::Result<Agent> {
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": "pwd > where.txt", "description": "Write the directory"}),
    ));
    live.model().reply(Reply::text("Written."));
    let agent = live
        .opencode_with(AgentOptions::default().permission(policy()))
        .await?;
    // New, or a warm workspace reset: nothing of an earlier scenario's.
    let mut found: Vec<String> = std::fs::read_dir(agent.workspace())?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    found.retain(|name| name != ".git" && name != ".opencode");
    anyhow::ensure!(found.is_empty(), "the workspace holds {found:?}");
    let before = agent.client().list_sessions().await?;
    anyhow::ensure!(before.is_empty(), "sessions before the first: {before:?}");
    let session = agent.create_session().await?;
    let turn = session.prompt("Where are you?").await?;
    anyhow::ensure!(
        turn.tool_calls.len() == 1 && turn.tool_calls[0].status == ToolStatus::Completed,
        "the bash call did not complete: {:?}",
        turn.tool_calls
    );
    let written = std::fs::read_to_string(agent.workspace().join("where.txt"))?;
    anyhow::ensure!(
        std::path::Path::new(written.trim()) == agent.workspace(),
        "the tool ran in {written:?}, not in the scenario's workspace"
    );
    let listed: Vec<String> = agent
        .client()
        .list_sessions()
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    anyhow::ensure!(
        listed == [session.id().to_string()],
        "the server listed other sessions than this scenario's: {listed:?}"
    );
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned(label, pid, &owner_token(&agent))?;
    Ok(agent)
}

#[live_agent_test(timeout = "180s", requires = ["SELFTEST_SCRATCH"])]
async fn first(live: &mut Live) -> anyhow::Result<()> {
    let agent = turn_in_own_directory(live, "first").await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    // A second turn left waiting on its ask, as a product that stopped rather than replied.
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": PENDING, "description": "Ask and wait"}),
    ));
    let client = agent.client();
    let session = agent.create_session().await?;
    client
        .prompt_async(session.id(), &Prompt::new("Ask me"))
        .await?;
    let asked = tokio::time::Instant::now() + Duration::from_secs(30);
    while client.permissions().await?.is_empty() {
        anyhow::ensure!(
            tokio::time::Instant::now() < asked,
            "no ask pending 30 s after the prompt"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

#[live_agent_test(timeout = "180s", requires = ["SELFTEST_SCRATCH"])]
async fn second(live: &mut Live) -> anyhow::Result<()> {
    let agent = turn_in_own_directory(live, "second").await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    // What only a server of its own allows is refused, naming the way out.
    let refused = agent.stop().await.unwrap_err().to_string();
    anyhow::ensure!(
        refused.contains("isolation = \"server\""),
        "stop on a shared server: {refused}"
    );
    anyhow::ensure!(agent.is_running(), "the refused stop stopped the server");
    Ok(())
}

#[live_agent_test(timeout = "180s", requires = ["SELFTEST_SCRATCH"], isolation = "server")]
async fn own(live: &mut Live) -> anyhow::Result<()> {
    let agent = turn_in_own_directory(live, "own").await?;
    anyhow::ensure!(
        !agent.is_shared(),
        "isolation = \"server\" got a shared server"
    );
    record_pid("done", std::process::id())?;
    Ok(())
}
