//! A shared server that dies mid-scenario (the default isolation), driven by
//! `tests/runs/hygiene.rs` with one trial at a time: `kills_its_server` kills the server it leased
//! and fails on its next request; `next_leases_a_new_server` then gets a new server and passes.
//! Each records `<label> <server pid>` in the scratch dir.

use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::record_owned;

#[live_agent_test(timeout = "120s", requires = ["SELFTEST_SCRATCH"])]
async fn kills_its_server(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("dead", pid, &owner_token(&agent))?;
    let session = agent.create_session().await?;
    // As an out-of-memory kill or a crash would: the whole server at once.
    let pid = libc::pid_t::try_from(pid)?;
    // SAFETY: kill only sends a signal, to the server this scenario leased.
    anyhow::ensure!(
        unsafe { libc::kill(pid, libc::SIGKILL) } == 0,
        "kill failed"
    );
    match session.prompt("Are you there?").await {
        Ok(turn) => anyhow::bail!("a killed server answered a prompt: {:?}", turn.text),
        Err(e) => Err(anyhow::anyhow!("the shared server died: {e}")),
    }
}

#[live_agent_test(timeout = "120s", requires = ["SELFTEST_SCRATCH"])]
async fn next_leases_a_new_server(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("Alive."));
    let agent = live.opencode().await?;
    anyhow::ensure!(agent.is_shared(), "not on a shared server");
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    record_owned("next", pid, &owner_token(&agent))?;
    let turn = agent.create_session().await?.prompt("Hello").await?;
    anyhow::ensure!(
        turn.text == "Alive.",
        "the new server answered {:?}",
        turn.text
    );
    Ok(())
}
