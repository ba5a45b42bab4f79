//! `fixture.start_to_ready`: `live.opencode()` with `agent = "fixture"`, i.e. this bench binary
//! re-executed in the fixture-agent role through the same spawn and readiness code as OpenCode.

use std::time::{Duration, Instant};

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::AgentKind;

use crate::common::{Bench, BenchError, finish, progress, secs};
use crate::report::Figure;

const SECTION: &str = "fixture";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let n = bench.settings.samples * 2;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let took = start_once(bench).await?;
        progress(SECTION, &format!("start {}/{n}: {}", i + 1, secs(took)));
        samples.push(took);
    }
    Ok(Figure::median("fixture.start_to_ready", &samples)
        .into_iter()
        .collect())
}

async fn start_once(bench: &Bench) -> Result<Duration, BenchError> {
    let options = ScenarioOptions {
        agent: AgentKind::Fixture,
        ..ScenarioOptions::DEFAULT
    };
    let mut live = bench.live("bench::fixture", options);
    live.model();
    let started = Instant::now();
    let agent = live.opencode().await;
    let took = started.elapsed();
    let finished = finish(live, agent.is_ok()).await;
    agent.map_err(BenchError::harness)?;
    finished?;
    Ok(took)
}
