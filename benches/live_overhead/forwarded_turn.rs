//! `forwarded_turn`: the `turn` section's bare-reqwest turn (subscribe to `/event`, post
//! `prompt_async`, read events until the session is idle) sent through the agent's forwarder,
//! as a product's own client sends it, against the same turn sent straight to the agent: the
//! same server, the same scripted reply, a fresh session per turn on both sides.
//!
//! The server is the harness's own, as for `turn`: the raw side's requests name no directory.

use crate::common::{Bench, BenchError, OWN_SERVER, finish, interleave, turn_agent};
use crate::report::Figure;
use crate::turn::{REPLY, raw_turn};

const SECTION: &str = "forwarded_turn";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let (live, agent) = turn_agent(
        bench.live("bench::forwarded_turn", OWN_SERVER),
        SECTION,
        REPLY,
    )
    .await?;
    bench.redactor.add_port(agent.port());
    let (direct, forwarded) = (agent.endpoint(), agent.forwarded_url());
    if let Some(port) = forwarded.rsplit(':').next().and_then(|p| p.parse().ok()) {
        bench.redactor.add_port(port);
    }
    let n = bench.settings.turn_pairs();
    let measured = async {
        // The first prompt loads the provider (seconds): a warm-up turn per side.
        raw_turn(bench, &forwarded).await?;
        raw_turn(bench, &direct).await?;
        interleave(
            SECTION,
            n,
            ["forwarded", "direct"],
            || raw_turn(bench, &forwarded),
            || raw_turn(bench, &direct),
        )
        .await
    }
    .await;
    // Every turn of both sides reached the model exactly once, and the forwarder saw each of
    // its side's prompts: the forwarded side really went through it.
    let requests = live.model().requests().len();
    let misses = live.model().misses().len();
    let forwarded_prompts = live
        .wire()
        .counters()
        .requests
        .get("POST /session/{sessionID}/prompt_async")
        .copied()
        .unwrap_or(0);
    let finished = finish(live, measured.is_ok()).await;
    let [through, straight] = measured?;
    finished?;
    let expected = 2 + 2 * n;
    if requests != expected || misses != 0 || forwarded_prompts != (1 + n) as u64 {
        return Err(BenchError::Harness(format!(
            "the model saw {requests} requests ({misses} unanswered) for {expected} turns, and \
             the forwarder {forwarded_prompts} prompts for {}",
            1 + n
        )));
    }
    Ok([
        Figure::ratio("forwarded_turn", &through, &straight),
        Figure::median("forwarded_turn.forwarded", &through),
        Figure::median("forwarded_turn.direct", &straight),
    ]
    .into_iter()
    .flatten()
    .collect())
}
