//! `explored_schedule.per_run`: what one run of an exploring scenario costs, whole, on a warm
//! workspace (what the runner gives each run now) against the same run in a fresh directory
//! (what each run cost before warm workspaces: OpenCode starting an instance for the new
//! directory). A run is what the runner does for each schedule: a lease of a shared server of
//! the pool with its workspace (`live.opencode()`, isolation `shared`), an exploring run's
//! scheduler on the context's gates (the default order and decision points,
//! `LIVE_EXPLORE_QUIET`), the `turn` section's bare-reqwest turn through the agent's forwarder,
//! and the release (`finish`: the workspace reset for the next lease, or removed and its
//! instance disposed).
//!
//! The cost is CPU: the pool's servers' (with the processes they spawned) and this process's
//! (the harness's side), from before the lease until the servers are quiet after the release,
//! so what the pool does in the background for a run counts. It is what bounds a search's
//! speed when runs go side by side; a run's wall time barely differs (a new directory's
//! instance boots in about as long as a warm one's reset takes), and is printed beside it.
//! Pairs interleaved, after a warm-up run a side (the pool's first lease starts its server).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::AgentOptions;
use harness_runtime::prelude::*;
use harness_runtime::testing::{self, ExploringRun};

use crate::common::{Bench, BenchError, finish, progress};
use crate::proc_cpu;
use crate::report::Figure;
use crate::scenario_cpu::{SHARED, quiet_ticks};
use crate::turn::{REPLY, raw_turn};

const SECTION: &str = "explored_schedule";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    // The pool the runner owns for its run: stopped here, or its servers would run through the
    // other sections.
    let pool = testing::SharedServers::new();
    let measured = measure_on(bench, &pool).await;
    pool.shutdown().await;
    let [warm, fresh] = measured?;
    let cpu = |side: &[Cost]| side.iter().map(|c| c.cpu).collect::<Vec<_>>();
    let wall = |side: &[Cost]| side.iter().map(|c| c.wall).collect::<Vec<_>>();
    Ok([
        Figure::ratio("explored_schedule.per_run", &cpu(&warm), &cpu(&fresh)),
        Figure::median("explored_schedule.per_run.warm_cpu", &cpu(&warm)),
        Figure::median(
            "explored_schedule.per_run.fresh_directory_cpu",
            &cpu(&fresh),
        ),
        Figure::median("explored_schedule.per_run.warm_wall", &wall(&warm)),
        Figure::median(
            "explored_schedule.per_run.fresh_directory_wall",
            &wall(&fresh),
        ),
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// What one run cost.
struct Cost {
    cpu: Duration,
    /// Of which this process's.
    harness: Duration,
    wall: Duration,
}

async fn measure_on(
    bench: &Bench,
    pool: &testing::SharedServers,
) -> Result<[Vec<Cost>; 2], BenchError> {
    let mut servers = BTreeSet::new();
    one_run(bench, pool, true, &mut servers).await?;
    one_run(bench, pool, false, &mut servers).await?;
    let n = bench.settings.explored_pairs();
    let mut sides: [Vec<Cost>; 2] = [Vec::with_capacity(n), Vec::with_capacity(n)];
    for pair in 0..n {
        let order = if pair % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let cost = one_run(bench, pool, side == 0, &mut servers).await?;
            progress(
                SECTION,
                &format!(
                    "an explored run on a {} {}/{n}: {:.0} ms CPU ({:.0} ms of it the \
                     harness's), {:.0} ms wall, lease to release",
                    ["warm workspace", "fresh directory"][side],
                    pair + 1,
                    cost.cpu.as_secs_f64() * 1000.0,
                    cost.harness.as_secs_f64() * 1000.0,
                    cost.wall.as_secs_f64() * 1000.0
                ),
            );
            sides[side].push(cost);
        }
    }
    Ok(sides)
}

/// One explored run, whole: lease, scheduler, turn, release; its CPU counted on `servers` (the
/// pool's, as far as seen; a server first seen in this run counts from its start) and on this
/// process. `warm`: a warm workspace of the pool (every run has the same config); else a fresh
/// directory.
async fn one_run(
    bench: &Bench,
    pool: &testing::SharedServers,
    warm: bool,
    servers: &mut BTreeSet<u32>,
) -> Result<Cost, BenchError> {
    let me = std::process::id();
    let mut counted: Vec<u32> = servers.iter().copied().chain([me]).collect();
    let before = proc_cpu::ticks_of(&counted);
    let started = Instant::now();
    let mut live = testing::live_sharing(bench.info("bench::explored_run", SHARED), pool);
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let options = if warm {
        AgentOptions::default()
    } else {
        AgentOptions::default().fresh_workspace()
    };
    let agent = match live.opencode_with(options).await {
        Ok(agent) => agent,
        Err(e) => {
            let _ = finish(live, false).await;
            return Err(BenchError::harness(e));
        }
    };
    bench.redactor.add_port(agent.port());
    if let Some(pid) = agent.pid()
        && servers.insert(pid)
    {
        counted.push(pid);
    }
    let turned = async {
        if !agent.is_shared() {
            return Err(BenchError::Harness(
                "an explored run asking for isolation = \"shared\" got a server of its own".into(),
            ));
        }
        let run = ExploringRun::fifo(live.gates()).ok_or_else(|| {
            BenchError::Harness("a new context's gates already had a scheduler".into())
        })?;
        raw_turn(bench, &agent.forwarded_url()).await?;
        // A scheduler that held nothing would make the run a plain one.
        if run.released().0 == 0 {
            return Err(BenchError::Harness(
                "the scheduler held no step of the run's turn".into(),
            ));
        }
        Ok(())
    }
    .await;
    drop(agent);
    let finished = finish(live, turned.is_ok()).await;
    turned?;
    finished?;
    let wall = started.elapsed();
    let after = quiet_ticks(SECTION, &counted).await;
    let spent = |pid: &u32| {
        let now = after.get(pid).copied().unwrap_or(0);
        now.saturating_sub(before.get(pid).copied().unwrap_or(0))
    };
    let harness = spent(&me);
    let ticks: u64 = counted.iter().map(spent).sum();
    Ok(Cost {
        cpu: proc_cpu::duration(ticks),
        harness: proc_cpu::duration(harness),
        wall,
    })
}
