//! `explored_schedule`: what one schedule of an exploring scenario costs against one plain run
//! of the same body. The body is the `turn` section's bare-reqwest turn (a fresh session,
//! subscribe to `/event`, post `prompt_async`, read until idle), as a product's own client
//! sends it, through a forwarder in front of the same server on both sides; the explored side's
//! forwarder has an exploring run's scheduler installed (every request, response and session
//! event held until the system was quiet, `LIVE_EXPLORE_QUIET`), the plain side's has none.
//! Each sample gets a forwarder (and a scheduler) of its own, as each explored run gets a fresh
//! context; starting it is outside the timing on both sides.
//!
//! What the ratio does not count: the agent context the runner gives each run (a lease of the
//! pooled server and a workspace): `explored_schedule.per_run` ([`crate::explored_run`]) counts
//! it, on a warm workspace against a fresh directory.

use std::time::{Duration, Instant};

use harness_runtime::testing::{ExploringRun, Forwarder};

use crate::common::{Bench, BenchError, OWN_SERVER, finish, interleave, progress, turn_agent};
use crate::report::Figure;
use crate::turn::{REPLY, raw_turn};

const SECTION: &str = "explored_schedule";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let (live, agent) = turn_agent(
        bench.live("bench::explored_schedule", OWN_SERVER),
        SECTION,
        REPLY,
    )
    .await?;
    bench.redactor.add_port(agent.port());
    let upstream = agent.endpoint();
    let n = bench.settings.explored_pairs();
    let measured = async {
        // The first prompt loads the provider (seconds): a warm-up turn per side.
        one_run(bench, &upstream, false).await?;
        one_run(bench, &upstream, true).await?;
        interleave(
            SECTION,
            n,
            ["explored", "plain"],
            || one_run(bench, &upstream, true),
            || one_run(bench, &upstream, false),
        )
        .await
    }
    .await;
    // Every turn of both sides reached the model exactly once.
    let requests = live.model().requests().len();
    let misses = live.model().misses().len();
    let finished = finish(live, measured.is_ok()).await;
    let [explored, plain] = measured?;
    finished?;
    let expected = 2 + 2 * n;
    if requests != expected || misses != 0 {
        return Err(BenchError::Harness(format!(
            "the model saw {requests} requests ({misses} unanswered) for {expected} turns"
        )));
    }
    let mut figures: Vec<Figure> = [
        Figure::ratio("explored_schedule", &explored, &plain),
        Figure::median("explored_schedule.explored", &explored),
        Figure::median("explored_schedule.plain", &plain),
    ]
    .into_iter()
    .flatten()
    .collect();
    // What the quiet costs a turn is the part above; what a whole run costs is the context it
    // gets for it, the part below.
    figures.extend(crate::explored_run::measure(bench).await?);
    Ok(figures)
}

/// One run of the body through a forwarder of its own to `upstream`; `explored`: with an
/// exploring run's scheduler on it. The time from the first request to idle.
async fn one_run(bench: &Bench, upstream: &str, explored: bool) -> Result<Duration, BenchError> {
    let forwarder = Forwarder::start(upstream)
        .map_err(|e| BenchError::Harness(format!("a forwarder did not start: {e}")))?;
    let url = forwarder.url();
    if let Some(port) = url.rsplit(':').next().and_then(|p| p.parse().ok()) {
        bench.redactor.add_port(port);
    }
    let scheduler = if explored {
        let run = ExploringRun::fifo(forwarder.gates()).ok_or_else(|| {
            BenchError::Harness("a fresh forwarder's gates already had a scheduler".into())
        })?;
        Some(run)
    } else {
        None
    };
    let started = Instant::now();
    raw_turn(bench, &url).await?;
    let took = started.elapsed();
    if let Some(scheduler) = scheduler {
        // A scheduler that held nothing would make the explored side a plain one.
        let (steps, decisions) = scheduler.released();
        if steps == 0 {
            return Err(BenchError::Harness(
                "the scheduler held no step of the turn: the explored side was not explored".into(),
            ));
        }
        progress(
            SECTION,
            &format!(
                "the explored run held {steps} steps one at a time, {decisions} of them at a \
                 decision (several held together)"
            ),
        );
    }
    Ok(took)
}
