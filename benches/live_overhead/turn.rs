//! `turn`: one scripted turn through the harness client (`session.prompt`: subscribe, baseline,
//! post, collect the whole turn) against the same turn with bare reqwest (subscribe to
//! `/event`, `POST /session/{id}/prompt_async`, read events until the session is idle), on the
//! same server, the same scripted reply, a fresh session per turn on both sides.
//!
//! The server is the harness's own (`isolation = "server"`, whatever `LIVE_ISOLATION` says): the
//! raw side's requests name no directory, so they reach the server's own workspace, which is the
//! agent's only on a server of its own.

use std::time::{Duration, Instant};

use harness_runtime::opencode::{Agent, DEFAULT_SESSION_TITLE};
use harness_runtime::prelude::*;
use harness_runtime::scaled;
use serde_json::Value;

use crate::common::{Bench, BenchError, OWN_SERVER, finish, interleave, turn_agent};
use crate::report::Figure;
use crate::sse::RawEvents;

const SECTION: &str = "turn";
/// The prompt of every turn (`replay_turn` measures the same turn).
pub const PROMPT: &str = "Say pong";
/// The scripted model's whole answer.
pub const REPLY: &str = "pong";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let (live, agent) = turn_agent(bench.live("bench::turn", OWN_SERVER), SECTION, REPLY).await?;
    bench.redactor.add_port(agent.port());
    let n = bench.settings.turn_pairs();
    let measured = measure_on(bench, &agent, n).await;
    // Every turn of both sides reached the model exactly once, and nothing went unanswered.
    let requests = live.model().requests().len();
    let misses = live.model().misses().len();
    let finished = finish(live, measured.is_ok()).await;
    let figures = measured?;
    finished?;
    let expected = 2 + 2 * n;
    if requests != expected || misses != 0 {
        return Err(BenchError::Harness(format!(
            "the model saw {requests} requests ({misses} unanswered) for {expected} turns"
        )));
    }
    Ok(figures)
}

async fn measure_on(bench: &Bench, agent: &Agent, n: usize) -> Result<Vec<Figure>, BenchError> {
    // The first prompt loads the provider (seconds): a warm-up turn per side.
    let base = agent.endpoint();
    harness_turn(agent).await?;
    raw_turn(bench, &base).await?;
    let [harness, raw] = interleave(
        SECTION,
        n,
        ["harness", "raw"],
        || harness_turn(agent),
        || raw_turn(bench, &base),
    )
    .await?;
    Ok([
        Figure::ratio("turn", &harness, &raw),
        Figure::median("turn.harness", &harness),
        Figure::median("turn.raw", &raw),
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// One turn through the harness client in a fresh session: [`PROMPT`], answered [`REPLY`].
pub async fn harness_turn(agent: &Agent) -> Result<Duration, BenchError> {
    let session = agent.create_session().await.map_err(BenchError::harness)?;
    let started = Instant::now();
    let turn = session.prompt(PROMPT).await.map_err(BenchError::harness)?;
    let took = started.elapsed();
    if turn.text != REPLY || turn.error().is_some() {
        return Err(BenchError::Harness(format!(
            "the turn answered {:?} with error {:?}",
            turn.text,
            turn.error()
        )));
    }
    Ok(took)
}

/// One turn with bare reqwest against `base` (the agent's endpoint, or its forwarded URL) in a
/// fresh session: create it, then time subscribe, post and read until idle.
pub async fn raw_turn(bench: &Bench, base: &str) -> Result<Duration, BenchError> {
    let session: Value = bench
        .http
        .post(format!("{base}/session"))
        .json(&json!({"title": DEFAULT_SESSION_TITLE}))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| BenchError::Raw(format!("POST /session: {e}")))?
        .json()
        .await
        .map_err(|e| BenchError::Raw(format!("POST /session answered: {e}")))?;
    let id = session["id"]
        .as_str()
        .ok_or_else(|| BenchError::Raw("POST /session answered no id".into()))?
        .to_string();
    let ceiling = scaled(Duration::from_secs(120));
    let started = Instant::now();
    tokio::time::timeout(ceiling, raw_turn_steps(bench, base, &id))
        .await
        .map_err(|_| {
            BenchError::Raw(format!(
                "the raw turn did not reach idle within {ceiling:?}"
            ))
        })??;
    Ok(started.elapsed())
}

/// Subscribe (until `server.connected`: OpenCode replays nothing), post, read until the session
/// went busy and then idle.
async fn raw_turn_steps(bench: &Bench, base: &str, id: &str) -> Result<(), BenchError> {
    let mut events = RawEvents::open(&bench.http, base).await?;
    while events.next().await?["type"] != "server.connected" {}
    let posted = bench
        .http
        .post(format!("{base}/session/{id}/prompt_async"))
        .json(&json!({"parts": [{"type": "text", "text": PROMPT}]}))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| BenchError::Raw(format!("POST prompt_async: {e}")))?;
    drop(posted);
    let mut busy = false;
    loop {
        let event = events.next().await?;
        let properties = &event["properties"];
        if properties["sessionID"] != id {
            continue;
        }
        let status = properties["status"]["type"].as_str();
        match (event["type"].as_str(), status) {
            (Some("session.status"), Some("busy")) => busy = true,
            (Some("session.status"), Some("idle")) | (Some("session.idle"), _) if busy => {
                return Ok(());
            }
            _ => {}
        }
    }
}
