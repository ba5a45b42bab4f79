//! `provisioning`: `live.opencode()` starting a server of its own (root, config, spawn,
//! listening line, health) against a bare `opencode serve` in the same root layout and
//! environment plus a health-poll loop. Both sides start with their scripted model already
//! running; both clocks include creating the root.
//!
//! The harness side asks for `isolation = "server"` whatever `LIVE_ISOLATION` says: a lease of
//! a warm shared server starts nothing, and against a server's start it would be a ratio near
//! zero that no change to provisioning could move.

use std::time::{Duration, Instant};

use harness_runtime::opencode::AgentOptions;
use harness_runtime::testing::ModelSlot;

use crate::common::{Bench, BenchError, OWN_SERVER, finish, harness_against_raw};
use crate::raw::RawServer;
use crate::report::Figure;

const SECTION: &str = "provisioning";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    harness_against_raw(bench, SECTION, || harness_once(bench), || raw_once(bench)).await
}

async fn harness_once(bench: &Bench) -> Result<Duration, BenchError> {
    let mut live = bench.live("bench::provisioning", OWN_SERVER);
    live.model(); // running before the clock starts, as on the raw side
    let started = Instant::now();
    let agent = live.opencode().await;
    let took = started.elapsed();
    let own = agent.as_ref().map(|agent| !agent.is_shared());
    let finished = finish(live, agent.is_ok()).await;
    if !own.map_err(BenchError::harness)? {
        return Err(BenchError::NotOwnServer(SECTION));
    }
    finished?;
    Ok(took)
}

async fn raw_once(bench: &Bench) -> Result<Duration, BenchError> {
    let mut model = ModelSlot::default();
    let config = model.opencode_config(AgentOptions::default().permission_config().clone());
    let (server, took) = RawServer::start(bench, &bench.opencode, &config).await?;
    server.stop().await?;
    Ok(took)
}
