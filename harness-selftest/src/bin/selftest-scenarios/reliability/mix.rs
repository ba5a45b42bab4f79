//! 100 fixture scenarios, ten of each kind, interleaved by name (`sNK_<kind>`: kind K of round
//! N), so any stretch of a parallel run mixes every outcome. Every agent leaves two processes
//! outside its process group: the fixture's detached grandchild (`setsid`, a direct child) and a
//! double-forked daemon that ignores SIGTERM (`daemon`).
//!
//! | kind | what runs | outcome |
//! |---|---|---|
//! | `pass` | agent, one turn | pass |
//! | `pass_sigterm` | agent that ignores SIGTERM (stop escalates to SIGKILL), one turn | pass |
//! | `pass_crash` | agent that exits mid-turn; the scenario expects it | pass |
//! | `pass_two` | two agents (the second without a grandchild) | pass |
//! | `err` | agent, then `Err` | fail |
//! | `err_sigterm` | agent that ignores SIGTERM, then `Err` | fail |
//! | `panic` | agent, then a panic | fail |
//! | `timeout` | agent, then waits past the ceiling | fail |
//! | `crash_fails` | agent that exits mid-turn; the turn's error is returned | fail |
//! | `crash_start` | agent that exits before it is ready | fail |

use std::time::Duration;

use harness_runtime::client::ClientError;
use harness_runtime::fixture::Fault;
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing::owner_token;
use harness_selftest::scratch::{SCRATCH, read_pid, record_owned};

use super::daemon::DAEMON;

/// Starts a fixture agent with `faults`, its detached grandchild and its daemon; records the
/// grandchild (the agent records itself and the daemon).
async fn agent(live: &mut Live, faults: &[Fault]) -> anyhow::Result<Agent> {
    for fault in faults {
        live.fixture().inject(fault.clone())?;
    }
    live.fixture().inject(Fault::DetachedGrandchild)?;
    let agent = agent_with_daemon(live).await?;
    let grandchild = read_pid(&agent.root().join("home").join("grandchild.pid"))?;
    record_owned("grandchild", grandchild, &owner_token(&agent))?;
    Ok(agent)
}

/// A fixture agent with only its daemon: a scenario's fault controls follow its latest agent
/// once that agent started, so faults cannot be set up for a second agent before it starts.
/// The agent records itself and its daemon in the scratch dir, outside its root: its sandbox
/// is widened to let it.
async fn agent_with_daemon(live: &mut Live) -> anyhow::Result<Agent> {
    let scratch =
        std::env::var_os(SCRATCH).ok_or_else(|| anyhow::anyhow!("{SCRATCH} is not set"))?;
    let options = AgentOptions::default().env(DAEMON, "1").writable(scratch);
    Ok(live.opencode_with(options).await?)
}

async fn one_turn(agent: &Agent) -> anyhow::Result<()> {
    let session = agent.create_session().await?;
    let turn = session.prompt("hello").await?;
    anyhow::ensure!(turn.errors.is_empty(), "the turn failed: {:?}", turn.errors);
    Ok(())
}

/// A turn on an agent that exits mid-turn: the stream ends, then the process is gone.
async fn crash_mid_turn(agent: &Agent) -> Result<(), ClientError> {
    let session = agent.create_session().await?;
    session.prompt("work").await.map(drop)
}

async fn pass(live: &mut Live) -> anyhow::Result<()> {
    let agent = agent(live, &[]).await?;
    one_turn(&agent).await
}

async fn pass_sigterm(live: &mut Live) -> anyhow::Result<()> {
    let agent = agent(live, &[Fault::IgnoreSigterm]).await?;
    one_turn(&agent).await
}

async fn pass_crash(live: &mut Live) -> anyhow::Result<()> {
    let agent = agent(live, &[Fault::ExitMidTurn]).await?;
    let err = crash_mid_turn(&agent)
        .await
        .err()
        .ok_or_else(|| anyhow::anyhow!("the turn completed although the agent exited"))?;
    anyhow::ensure!(
        matches!(err, ClientError::StreamEnded { .. }),
        "expected StreamEnded, got {err}"
    );
    agent.wait_exit(Duration::from_secs(10)).await?;
    Ok(())
}

async fn pass_two(live: &mut Live) -> anyhow::Result<()> {
    let first = agent(live, &[]).await?;
    let second = agent_with_daemon(live).await?;
    anyhow::ensure!(first.is_running() && second.is_running());
    Ok(())
}

async fn err(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent(live, &[]).await?;
    Err(anyhow::anyhow!("deliberate failure while the agent runs"))
}

async fn err_sigterm(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent(live, &[Fault::IgnoreSigterm]).await?;
    Err(anyhow::anyhow!(
        "deliberate failure while an agent deaf to SIGTERM runs"
    ))
}

async fn panic(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent(live, &[]).await?;
    panic!("deliberate panic while the agent runs");
}

async fn timeout(live: &mut Live) -> anyhow::Result<()> {
    let _agent = agent(live, &[]).await?;
    std::future::pending::<()>().await;
    Ok(())
}

async fn crash_fails(live: &mut Live) -> anyhow::Result<()> {
    let agent = agent(live, &[Fault::ExitMidTurn]).await?;
    crash_mid_turn(&agent).await?;
    Ok(())
}

async fn crash_start(live: &mut Live) -> anyhow::Result<()> {
    agent(live, &[Fault::ExitDuringStart]).await?;
    Err(anyhow::anyhow!("the agent started although it should exit"))
}

/// `kind "ceiling": names…;` → one scenario per name running `kind`.
macro_rules! scenarios {
    ($($kind:ident $timeout:tt: $($name:ident)+;)+) => {$($(
        #[live_agent_test(agent = "fixture", timeout = $timeout, requires = ["SELFTEST_SCRATCH"])]
        async fn $name(live: &mut Live) -> anyhow::Result<()> {
            $kind(live).await
        }
    )+)+};
}

scenarios! {
    pass "60s": s00_pass s10_pass s20_pass s30_pass s40_pass s50_pass s60_pass s70_pass s80_pass s90_pass;
    pass_sigterm "60s": s01_pass_sigterm s11_pass_sigterm s21_pass_sigterm s31_pass_sigterm s41_pass_sigterm s51_pass_sigterm s61_pass_sigterm s71_pass_sigterm s81_pass_sigterm s91_pass_sigterm;
    pass_crash "60s": s02_pass_crash s12_pass_crash s22_pass_crash s32_pass_crash s42_pass_crash s52_pass_crash s62_pass_crash s72_pass_crash s82_pass_crash s92_pass_crash;
    pass_two "60s": s03_pass_two s13_pass_two s23_pass_two s33_pass_two s43_pass_two s53_pass_two s63_pass_two s73_pass_two s83_pass_two s93_pass_two;
    err "60s": s04_err s14_err s24_err s34_err s44_err s54_err s64_err s74_err s84_err s94_err;
    err_sigterm "60s": s05_err_sigterm s15_err_sigterm s25_err_sigterm s35_err_sigterm s45_err_sigterm s55_err_sigterm s65_err_sigterm s75_err_sigterm s85_err_sigterm s95_err_sigterm;
    panic "60s": s06_panic s16_panic s26_panic s36_panic s46_panic s56_panic s66_panic s76_panic s86_panic s96_panic;
    timeout "4s": s07_timeout s17_timeout s27_timeout s37_timeout s47_timeout s57_timeout s67_timeout s77_timeout s87_timeout s97_timeout;
    crash_fails "60s": s08_crash_fails s18_crash_fails s28_crash_fails s38_crash_fails s48_crash_fails s58_crash_fails s68_crash_fails s78_crash_fails s88_crash_fails s98_crash_fails;
    crash_start "60s": s09_crash_start s19_crash_start s29_crash_start s39_crash_start s49_crash_start s59_crash_start s69_crash_start s79_crash_start s89_crash_start s99_crash_start;
}
