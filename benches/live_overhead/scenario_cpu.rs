//! `shared_scenario_cpu`: what a one-turn scenario costs the shared server it runs on, in CPU,
//! against what a fresh directory costs a server (the shared pool's cost per scenario before
//! warm workspaces: a new directory's instance boot, project detection and the turn).
//!
//! - shared: one-turn scenarios (`live.opencode()` with `isolation = "shared"`, a fresh session,
//!   "Say pong" answered "pong", the scenario finished) one after another on the pool, whatever
//!   the pool does for them: warm workspaces, resets, disposes, workspaces booted in the
//!   background.
//! - fresh directory: a bare `opencode serve` started as the pool starts its servers (config
//!   `{}`), and per scenario a new workspace made as the harness makes one (a git repository
//!   with its own project id, the scenario's config in `.opencode/opencode.jsonc`, the plugin
//!   seed), the same turn through `POST /session/{id}/message?directory=`, then what the pool
//!   did at release: the session deleted and the instance disposed.
//!
//! A side's figure for a round is its servers' CPU (user + system, their own and that of the
//! processes they spawned and reaped: `git`, tools) from before its scenarios to after they
//! ended and the servers went quiet, divided by the scenarios: background work the pool does
//! after a release is counted. Rounds interleave the sides; each starts after warm-up scenarios
//! (the server's start and its first directories are not what a scenario of a running suite
//! pays).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::Isolation;
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::{AgentOptions, DEFAULT_SESSION_TITLE};
use harness_runtime::prelude::*;
use harness_runtime::testing::{self, ModelSlot};
use serde_json::Value;

use crate::common::{Bench, BenchError, finish, progress};
use crate::proc_cpu;
use crate::raw::RawServer;
use crate::report::Figure;
use crate::turn::{PROMPT, REPLY, harness_turn};

const SECTION: &str = "scenario_cpu";
/// Leases before the measured rounds: the pool's first leases start its server and fill it.
const SHARED_WARM_UPS: usize = 2;
/// The first directory on a new server costs more than the next ones (1.8 s against 1.2 s).
const FRESH_WARM_UPS: usize = 1;
/// Quiet: the servers' CPU grew by at most a tick over this long.
const QUIET: Duration = Duration::from_millis(600);
/// How long the servers may stay busy after a round (a background boot takes ~2 s).
const QUIET_CEILING: Duration = Duration::from_secs(20);

/// A scenario on a shared server, as the default isolation gives it.
pub const SHARED: ScenarioOptions = ScenarioOptions {
    isolation: Some(Isolation::Shared),
    ..ScenarioOptions::DEFAULT
};

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let (rounds, per_round) = bench.settings.cpu_rounds();
    progress(
        SECTION,
        &format!(
            "{rounds} round(s) a side of {per_round} one-turn scenarios; CPU per scenario = the \
             servers' user+system CPU (with what they spawned) over a round / {per_round}"
        ),
    );
    let mut fresh = FreshDirectories::start(bench).await?;
    // The shared side's pool, as the runner owns one for its run: stopped here, or its servers
    // would run through the other sections.
    let pool = testing::SharedServers::new();
    let measured = measure_with(bench, &pool, &mut fresh, rounds, per_round).await;
    pool.shutdown().await;
    let stopped = fresh.server.stop().await;
    let figures = measured?;
    stopped?;
    Ok(figures)
}

async fn measure_with(
    bench: &Bench,
    pool: &testing::SharedServers,
    fresh: &mut FreshDirectories,
    rounds: usize,
    per_round: usize,
) -> Result<Vec<Figure>, BenchError> {
    let mut servers = BTreeMap::new();
    for _ in 0..SHARED_WARM_UPS {
        shared_scenario(bench, pool, &mut servers).await?;
    }
    for _ in 0..FRESH_WARM_UPS {
        fresh.scenario(bench).await?;
    }
    let mut shared = Vec::with_capacity(rounds);
    let mut fresh_cpu = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let per_scenario = if side == 0 {
                shared_round(bench, pool, &mut servers, per_round).await?
            } else {
                fresh.round(bench, per_round).await?
            };
            let name = ["shared", "fresh directory"][side];
            progress(
                SECTION,
                &format!(
                    "{name} round {}/{rounds}: {:.0} ms CPU per scenario",
                    round + 1,
                    per_scenario.as_secs_f64() * 1000.0
                ),
            );
            if side == 0 {
                &mut shared
            } else {
                &mut fresh_cpu
            }
            .push(per_scenario);
        }
    }
    progress(
        SECTION,
        &format!(
            "the shared scenarios ran on {} server(s) of the pool",
            servers.len()
        ),
    );
    Ok([
        Figure::ratio("shared_scenario_cpu", &shared, &fresh_cpu),
        Figure::median("scenario_cpu.shared", &shared),
        Figure::median("scenario_cpu.fresh_directory", &fresh_cpu),
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// `per_round` shared scenarios: the CPU of every server they leased (and of the servers the
/// earlier ones leased), from before the first to quiet after the last, per scenario. A server
/// first seen in the round counts from its start.
async fn shared_round(
    bench: &Bench,
    pool: &testing::SharedServers,
    servers: &mut BTreeMap<u32, u64>,
    per_round: usize,
) -> Result<Duration, BenchError> {
    let known: Vec<u32> = servers.keys().copied().collect();
    let before = proc_cpu::ticks_of(&known);
    for _ in 0..per_round {
        shared_scenario(bench, pool, servers).await?;
    }
    let pids: Vec<u32> = servers.keys().copied().collect();
    let after = quiet_ticks(SECTION, &pids).await;
    let spent: u64 = pids
        .iter()
        .map(|pid| {
            let now = after.get(pid).copied().unwrap_or(0);
            now.saturating_sub(before.get(pid).copied().unwrap_or(0))
        })
        .sum();
    for pid in &pids {
        if !after.contains_key(pid) {
            progress(
                SECTION,
                "warning: a shared server ended during the round; its CPU is not counted",
            );
            servers.remove(pid);
        }
    }
    Ok(proc_cpu::duration(spent) / per_round as u32)
}

/// One one-turn scenario on a lease of a shared server; notes the server's pid.
async fn shared_scenario(
    bench: &Bench,
    pool: &testing::SharedServers,
    servers: &mut BTreeMap<u32, u64>,
) -> Result<(), BenchError> {
    let info = bench.info("bench::scenario_cpu", SHARED);
    let mut live = testing::live_sharing(info, pool);
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let agent = match live.opencode().await {
        Ok(agent) => agent,
        Err(e) => {
            let _ = finish(live, false).await;
            return Err(BenchError::harness(e));
        }
    };
    if !agent.is_shared() {
        drop(agent);
        let _ = finish(live, true).await;
        return Err(BenchError::Harness(
            "a scenario asking for isolation = \"shared\" got a server of its own, so its CPU \
             is not a shared scenario's"
                .into(),
        ));
    }
    if let Some(pid) = agent.pid() {
        servers.entry(pid).or_insert(0);
    }
    let turn = harness_turn(&agent).await;
    drop(agent);
    let finished = finish(live, turn.is_ok()).await;
    turn?;
    finished
}

/// The fresh-directory side: a bare server configured as the pool's, and a scripted model.
struct FreshDirectories {
    server: RawServer,
    pid: u32,
    model: ModelSlot,
    /// The config every workspace gets: the scripted model, the default permission policy.
    config: Value,
    /// Where the workspaces are made (removed with it).
    dir: tempfile::TempDir,
    made: usize,
}

impl FreshDirectories {
    async fn start(bench: &Bench) -> Result<FreshDirectories, BenchError> {
        let mut model = ModelSlot::default();
        let config = model.opencode_config(AgentOptions::default().permission_config().clone());
        model
            .model()
            .map_err(BenchError::harness)?
            .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
        let (server, _) = RawServer::start(bench, &bench.opencode, &serde_json::json!({})).await?;
        let pid = server
            .pid()
            .ok_or_else(|| BenchError::Raw("the bare server has no pid".into()))?;
        let dir = tempfile::Builder::new()
            .prefix("bench-scenario-cpu-")
            .tempdir()
            .map_err(|e| BenchError::io("create the fresh directories' folder", e))?;
        bench.redactor.add_path(dir.path(), "[fresh]");
        Ok(FreshDirectories {
            server,
            pid,
            model,
            config,
            dir,
            made: 0,
        })
    }

    async fn round(&mut self, bench: &Bench, per_round: usize) -> Result<Duration, BenchError> {
        let before = proc_cpu::ticks_of(&[self.pid]);
        for _ in 0..per_round {
            self.scenario(bench).await?;
        }
        let after = quiet_ticks(SECTION, &[self.pid]).await;
        let (Some(before), Some(after)) = (before.get(&self.pid), after.get(&self.pid)) else {
            return Err(BenchError::Raw(
                "the bare server ended during a round".into(),
            ));
        };
        Ok(proc_cpu::duration(after.saturating_sub(*before)) / per_round as u32)
    }

    /// A new workspace, one turn in it, its session deleted and its instance disposed.
    async fn scenario(&mut self, bench: &Bench) -> Result<(), BenchError> {
        self.made += 1;
        let workspace = self.dir.path().join(format!("workspace-{}", self.made));
        make_workspace(&workspace, &self.config)
            .map_err(|e| BenchError::io("make a fresh workspace", e))?;
        let directory = workspace.to_str().expect("a temp path is UTF-8");
        let base = &self.server.base;
        let query = [("directory", directory)];
        let session: Value = post(bench, &format!("{base}/session"), &query)
            .json(&serde_json::json!({"title": DEFAULT_SESSION_TITLE}))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| BenchError::Raw(format!("POST /session in a fresh directory: {e}")))?
            .json()
            .await
            .map_err(|e| BenchError::Raw(format!("POST /session answered: {e}")))?;
        let id = session["id"]
            .as_str()
            .ok_or_else(|| BenchError::Raw("POST /session answered no id".into()))?;
        let answer: Value = post(bench, &format!("{base}/session/{id}/message"), &query)
            .json(&serde_json::json!({"parts": [{"type": "text", "text": PROMPT}]}))
            .timeout(harness_runtime::scaled(Duration::from_secs(120)))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| BenchError::Raw(format!("POST /session/{{id}}/message: {e}")))?
            .json()
            .await
            .map_err(|e| BenchError::Raw(format!("the turn answered: {e}")))?;
        let text: String = answer["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|part| part["type"] == "text")
            .filter_map(|part| part["text"].as_str())
            .collect();
        if text != REPLY {
            return Err(BenchError::Raw(format!(
                "the fresh directory's turn answered {:?}, not {REPLY:?}",
                bench.redactor.redact(&text)
            )));
        }
        bench
            .http
            .delete(format!("{base}/session/{id}"))
            .query(&query)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| BenchError::Raw(format!("DELETE /session: {e}")))?;
        post(bench, &format!("{base}/instance/dispose"), &query)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| BenchError::Raw(format!("POST /instance/dispose: {e}")))?;
        let model = self.model.model().map_err(BenchError::harness)?;
        if !model.misses().is_empty() {
            return Err(BenchError::Raw(
                "the scripted model left a request of the fresh directory unanswered".into(),
            ));
        }
        Ok(())
    }
}

fn post<'a>(bench: &Bench, url: &str, query: &[(&'a str, &'a str)]) -> reqwest::RequestBuilder {
    bench.http.post(url).query(query)
}

/// A workspace as provisioning makes a shared scenario's: the work tree of an empty git
/// repository with a project id of its own, the config in `.opencode/opencode.jsonc` (hidden
/// from git) and the plugin seed that keeps OpenCode from installing into it.
fn make_workspace(workspace: &Path, config: &Value) -> std::io::Result<()> {
    let git = workspace.join(".git");
    std::fs::create_dir_all(git.join("objects"))?;
    std::fs::create_dir_all(git.join("refs").join("heads"))?;
    std::fs::create_dir_all(git.join("info"))?;
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
    std::fs::write(git.join("opencode"), testing::new_token())?;
    std::fs::write(
        git.join("info").join("exclude"),
        "/.opencode/opencode.jsonc\n/.opencode/package.json\n/.opencode/package-lock.json\n\
         /.opencode/node_modules/\n",
    )?;
    let dot = workspace.join(".opencode");
    std::fs::create_dir_all(dot.join("node_modules"))?;
    std::fs::write(
        dot.join("package.json"),
        r#"{"dependencies":{"@opencode-ai/plugin":"*"}}"#,
    )?;
    std::fs::write(
        dot.join("package-lock.json"),
        r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}"#,
    )?;
    let mut config = config.clone();
    config["$schema"] = "https://opencode.ai/config.json".into();
    std::fs::write(dot.join("opencode.jsonc"), config.to_string())
}

/// The CPU ticks of `pids` once they are quiet (grew by at most one tick over [`QUIET`]), or at
/// [`QUIET_CEILING`] (said on `section`'s progress line). Pids that ended are missing.
pub async fn quiet_ticks(section: &str, pids: &[u32]) -> BTreeMap<u32, u64> {
    let started = Instant::now();
    let mut last = proc_cpu::ticks_of(pids);
    loop {
        tokio::time::sleep(QUIET).await;
        let now = proc_cpu::ticks_of(pids);
        let grew: u64 = now
            .iter()
            .map(|(pid, t)| t.saturating_sub(last.get(pid).copied().unwrap_or(0)))
            .sum();
        if grew <= 1 {
            return now;
        }
        if started.elapsed() > QUIET_CEILING {
            progress(
                section,
                &format!("warning: the servers were still busy {QUIET_CEILING:?} after a round"),
            );
            return now;
        }
        last = now;
    }
}
