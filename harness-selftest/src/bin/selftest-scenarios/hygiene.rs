//! Process hygiene: each outcome of a body (pass, `Err`, panic, timeout) after the scenario
//! started an agent and a detached tool-like child. `tests/runs/hygiene.rs` runs them with
//! `--test-threads 1`, then `hygiene_probe` checks no owned process is left, then the test checks
//! the roots: only the failing scenarios keep theirs.

use harness_runtime::client::ToolStatus;
use harness_runtime::fixture::Fault;
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{read_pid, record_owned, record_pid};

/// A fixture agent that leaves a detached `sleep 600` (own session, reparented to init) behind,
/// like a tool command does; both pids are recorded.
async fn fixture_with_detached_child(live: &mut Live) -> anyhow::Result<Agent> {
    live.fixture().inject(Fault::DetachedGrandchild)?;
    let agent = live.opencode().await?;
    let token = owner_token(&agent);
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("server", server, &token)?;
    let detached = read_pid(&agent.root().join("home").join("grandchild.pid"))?;
    record_owned("detached", detached, &token)?;
    Ok(agent)
}

#[live_agent_test(agent = "fixture", timeout = "60s", requires = ["SELFTEST_SCRATCH"])]
async fn fixture_passes(live: &mut Live) -> anyhow::Result<()> {
    let agent = fixture_with_detached_child(live).await?;
    anyhow::ensure!(agent.is_running());
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s", requires = ["SELFTEST_SCRATCH"])]
async fn fixture_returns_err(live: &mut Live) -> anyhow::Result<()> {
    let _agent = fixture_with_detached_child(live).await?;
    Err(anyhow::anyhow!("deliberate failure while the agent runs"))
}

#[live_agent_test(agent = "fixture", timeout = "60s", requires = ["SELFTEST_SCRATCH"])]
async fn fixture_panics(live: &mut Live) -> anyhow::Result<()> {
    let _agent = fixture_with_detached_child(live).await?;
    panic!("deliberate panic while the agent runs");
}

#[live_agent_test(agent = "fixture", timeout = "8s", requires = ["SELFTEST_SCRATCH"])]
async fn fixture_times_out(live: &mut Live) -> anyhow::Result<()> {
    let _agent = fixture_with_detached_child(live).await?;
    live.progress("agent and detached child up; waiting for the ceiling");
    std::future::pending::<()>().await;
    Ok(())
}

/// Real OpenCode: its bash tool starts one `sleep` in the tool's own process group (OpenCode
/// spawns tool commands detached from the server's group) and one in a session of its own; the
/// scenario fails while both run.
#[live_agent_test(timeout = "180s", requires = ["SELFTEST_SCRATCH"])]
async fn opencode_returns_err(live: &mut Live) -> anyhow::Result<()> {
    let command = "sleep 600 </dev/null >/dev/null 2>&1 & echo $! > grouped.pid; \
                   setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > detached.pid";
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": command, "description": "Start two background sleeps"}),
    ));
    live.model().reply(Reply::text("Started."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Start the sleeps").await?;
    anyhow::ensure!(
        turn.tool_calls.len() == 1 && turn.tool_calls[0].status == ToolStatus::Completed,
        "the bash call did not complete: {:?}",
        turn.tool_calls
    );
    let token = owner_token(&agent);
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("server", server, &token)?;
    for name in ["grouped", "detached"] {
        let pid = read_pid(&agent.workspace().join(format!("{name}.pid")))?;
        record_owned(name, pid, &token)?;
    }
    record_pid("done", std::process::id())?;
    Err(anyhow::anyhow!(
        "deliberate failure while OpenCode and its tool's sleeps run"
    ))
}
