//! Real OpenCode for the heavy run (`RELIABILITY_OPENCODE=1`): its bash tool starts one `sleep`
//! in the tool's process group and a double-forked daemon deaf to SIGTERM in a session of its
//! own, then the scenario passes, fails, panics or times out while both run.

use harness_runtime::client::ToolStatus;
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{read_pid, record_owned};

const COMMAND: &str = "sleep 600 </dev/null >/dev/null 2>&1 & echo $! > grouped.pid; \
                       (trap '' TERM; exec setsid sleep 600) </dev/null >/dev/null 2>&1 & \
                       echo $! > daemon.pid";

/// OpenCode with both sleeps running; records the server and the sleeps.
async fn agent_with_sleeps(live: &mut Live) -> anyhow::Result<Agent> {
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": COMMAND, "description": "Start two background sleeps"}),
    ));
    live.model().reply(Reply::text("Started."));
    let agent = live.opencode().await?;
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no server pid"))?;
    let token = owner_token(&agent);
    record_owned("server", server, &token)?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Start the sleeps").await?;
    anyhow::ensure!(
        turn.tool_calls.len() == 1 && turn.tool_calls[0].status == ToolStatus::Completed,
        "the bash call did not complete: {:?}",
        turn.tool_calls
    );
    for name in ["grouped", "daemon"] {
        let pid = read_pid(&agent.workspace().join(format!("{name}.pid")))?;
        record_owned(name, pid, &token)?;
    }
    Ok(agent)
}

async fn pass(live: &mut Live) -> anyhow::Result<()> {
    let agent = agent_with_sleeps(live).await?;
    anyhow::ensure!(agent.is_running());
    Ok(())
}

async fn err(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent_with_sleeps(live).await?;
    Err(anyhow::anyhow!(
        "deliberate failure while OpenCode and its tool's sleeps run"
    ))
}

async fn panic(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent_with_sleeps(live).await?;
    panic!("deliberate panic while OpenCode and its tool's sleeps run");
}

async fn timeout(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent_with_sleeps(live).await?;
    std::future::pending::<()>().await;
    Ok(())
}

/// `kind "ceiling": names…;` → one scenario per name running `kind`.
macro_rules! scenarios {
    ($($kind:ident $timeout:tt: $($name:ident)+;)+) => {$($(
        #[live_agent_test(timeout = $timeout, requires = ["SELFTEST_SCRATCH", "RELIABILITY_OPENCODE"])]
        async fn $name(live: &mut Live) -> anyhow::Result<()> {
            $kind(live).await
        }
    )+)+};
}

scenarios! {
    pass "240s": r0_pass r4_pass r8_pass;
    err "240s": r1_err r5_err r9_err;
    panic "240s": r2_panic r6_panic r10_panic;
    timeout "90s": r3_timeout r7_timeout r11_timeout;
}
