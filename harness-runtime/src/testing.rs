//! Building blocks for test suites that exercise the harness itself, or tools built around it,
//! outside the runner: a [`Live`] made by hand, a scripted model without a scenario, bare agent
//! roots, owner marks and the sweep, the reaper, and the fixture program of a binary that cannot
//! dispatch roles.
//!
//! Scenarios never need this module: `#[live_agent_test]` and [`main!`](crate::main) give them
//! everything here. It is public on purpose, for the harness's own self-tests, reliability suite
//! and benchmark (and for anyone building a runner of their own), and it follows what those
//! need.
//!
//! **Outside semver**: anything here may change in any release, patch releases included. Pin
//! the exact version when you enable the `testing` feature.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scenario context's assertion, expanded in the calling crate: set it in a [`ScenarioInfo`].
pub use crate::__snapshot_assertion as snapshot_assertion;
// The pure turn assembler (a recorded event stream into a `Turn`, no server needed), the
// one-shot fact under every gate, and the reason a scenario without OpenCode is skipped.
pub use crate::client::turn::{Feed, TurnCollector};
pub use crate::gates::signal::Signal;
// A forwarder in front of a server the test started (the fixture agent), outside any scenario.
pub use crate::forward::standalone::Forwarder;
pub use crate::live::{FinishError, ScenarioInfo};
pub use crate::model::slot::ModelSlot;
pub use crate::model::slot::{MODEL_ID, PROVIDER_ID};
pub use crate::opencode::error::OPENCODE_NOT_FOUND;
pub use crate::process::run_reaper;
// The one rule for a missing prerequisite, for a test binary with its own `main`.
pub use crate::settings::MissingPrerequisite;

/// The variable that puts a re-executed test binary in a helper role (the fixture agent, the
/// reaper, the sandbox launcher): a process that starts other programs should not pass it on.
pub const ROLE_ENV: &str = crate::settings::ROLE;

use crate::Live;
use crate::opencode::{Agent, ProvisionError};

/// A scenario context for `info`, as the runner makes one per trial. The caller owns its end:
/// call [`finish_agents`] (the runner's `Live::finish` also reports the model's misses), or drop
/// it, which kills what it started and keeps its roots. A shared server it leases is its own
/// (killed, and its root removed, when the context is dropped); contexts that should share
/// servers are made by [`live_sharing`].
pub fn live(info: ScenarioInfo) -> Live {
    Live::new(info, Default::default())
}

/// A scenario context for `info` whose agents lease from `servers`, as the runner's trials
/// lease from the pool of its run: for a tool that runs scenarios one after another on warm
/// shared servers (the benchmark's CPU per shared scenario).
pub fn live_sharing(info: ScenarioInfo, servers: &SharedServers) -> Live {
    Live::new(info, servers.0.clone())
}

/// Shared servers (`LIVE_ISOLATION=shared`) for contexts made by [`live_sharing`], as the
/// runner owns the pool of its run. [`shutdown`](Self::shutdown) stops them after the last
/// context ended; dropped without it, they are killed.
#[derive(Clone, Debug, Default)]
pub struct SharedServers(std::sync::Arc<crate::opencode::SharedPool>);

impl SharedServers {
    /// An empty pool: servers start as contexts lease them.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops every server and removes their roots, as the runner does after its last trial:
    /// call it after the last lease was released (each context finished).
    pub async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// How the model of a context made by [`live_with_cassette`] is served: a cassette, whatever the
/// scenario's options and `LIVE_CASSETTE` say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CassettePlan {
    /// Records the cassette at the path. The agent's explicit
    /// [`AgentOptions::config`](crate::opencode::AgentOptions::config) is the real model's
    /// config (its `model`, `"<provider>/<model>"`, names the upstream); OpenCode gets it
    /// pointed at the relay. [`finish`] writes the file (as `.json.pending` when not passed).
    Record(PathBuf),
    /// Serves the cassette at the path, recorded for a scenario of the same name.
    Replay(PathBuf),
}

impl CassettePlan {
    fn plan(self) -> crate::cassette::ModelPlan {
        match self {
            CassettePlan::Record(path) => crate::cassette::ModelPlan::Record { path },
            CassettePlan::Replay(path) => crate::cassette::ModelPlan::Replay { path },
        }
    }
}

/// A scenario context for `info` whose model is served per `cassette`: a tool that builds a
/// cassette in-process (the benchmark's `replay_turn`) records one from a scripted upstream,
/// then replays it. End it with [`finish`].
pub fn live_with_cassette(info: ScenarioInfo, cassette: CassettePlan) -> Live {
    let run = crate::live::RunSetup {
        plan: Some(cassette.plan()),
        ..Default::default()
    };
    Live::for_run(info, Default::default(), run)
}

/// [`live_with_cassette`] whose relay reads `env` instead of the process's environment:
/// `SSL_CERT_FILE`/`SSL_CERT_DIR` (the roots it trusts upstream: a test's own CA), key
/// variables and `{env:NAME}` in the recorded config. For a tool that records from an HTTPS
/// upstream of its own (the benchmark's `relayed_turn`) without setting process variables.
pub fn live_with_cassette_env(
    info: ScenarioInfo,
    cassette: CassettePlan,
    env: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
) -> Live {
    let run = crate::live::RunSetup {
        plan: Some(cassette.plan()),
        relay_env: Some(crate::model::slot::RelayEnv(std::sync::Arc::new(env))),
        ..Default::default()
    };
    Live::for_run(info, Default::default(), run)
}

/// Ends `live` as the runner ends a scenario: the model's part first (a replay's unmatched
/// requests fail it; a recording is written, as pending when not `passed`), then its agents'
/// ([`finish_agents`]). Progress lines go to stderr as a scenario's do.
pub async fn finish(live: &mut Live, passed: bool) -> Result<(), FinishError> {
    live.finish(passed).await
}

/// The cassette at `path` as JSON, after the harness's own reader checked it as a replay does
/// (its `format`, every field, any scenario name): for tests of what a recording wrote. The
/// error names the file and what is wrong.
pub fn read_cassette(path: &Path) -> Result<serde_json::Value, CassetteUnreadable> {
    let cassette = crate::cassette::load(path, "").map_err(CassetteUnreadable)?;
    Ok(serde_json::to_value(&cassette).expect("a cassette is JSON"))
}

/// Why [`read_cassette`] could not read a cassette; the message names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct CassetteUnreadable(crate::cassette::CassetteError);

/// An agent root with nothing running in it: the layout and hermetic environment provisioning
/// gives an agent, for the benchmark's raw side (a bare `opencode serve` in the same conditions).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BareRoot {
    /// The root directory; remove it when done.
    pub root: PathBuf,
    /// The working directory a server should run in.
    pub workspace: PathBuf,
    /// The hermetic environment, `OPENCODE_CONFIG_CONTENT` included.
    pub env: Vec<(String, String)>,
}

impl BareRoot {
    /// `program` set up as provisioning starts an agent: in the workspace, with the hermetic
    /// environment and without this process's variables an agent must not inherit (the user's
    /// `OPENCODE_*`, the harness's roles and owner marks). For a client of an agent, such as the
    /// `opencode` CLI or TUI, run in the same conditions as the agent.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut command = std::process::Command::new(program);
        command.current_dir(&self.workspace);
        for name in crate::settings::not_for_agents() {
            command.env_remove(name);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }
}

/// Creates a root named after `name` with `config` as `OPENCODE_CONFIG_CONTENT`.
pub fn bare_root(name: &str, config: &serde_json::Value) -> std::io::Result<BareRoot> {
    let root = crate::opencode::AgentRoot::create(name)?;
    Ok(BareRoot {
        env: root.hermetic_env(
            &config.to_string(),
            crate::opencode::ModelsCatalog::for_config(config),
        ),
        workspace: root.workspace,
        root: root.root,
    })
}

/// Runs the agents' part of the end of a scenario: stops every agent `live` started, removes
/// their roots when `passed` (keeps and prints them otherwise).
pub async fn finish_agents(live: &mut Live, passed: bool) -> Result<(), FinishError> {
    live.finish_agents(passed).await
}

/// The `opencode` executable provisioning would run for a test crate at `manifest_dir`:
/// `LIVE_OPENCODE_BIN`, else the nearest `node_modules/.bin/opencode` walking up, else `PATH`.
pub fn find_opencode(manifest_dir: &Path) -> Result<PathBuf, ProvisionError> {
    crate::opencode::find_opencode(manifest_dir)
}

/// The owner mark every process of `agent` carries.
pub fn owner_token(agent: &Agent) -> String {
    agent.owner_token().to_string()
}

/// The environment variable that carries owner marks.
pub const OWNER_ENV: &str = crate::process::OWNER_ENV;

/// A fresh owner mark.
pub fn new_token() -> String {
    crate::process::new_token()
}

/// Live processes carrying `token`.
pub fn carriers(token: &str) -> Vec<u32> {
    crate::process::carriers(&[token.to_string()])
}

/// Kills every process carrying `token`; returns how many.
pub fn sweep(token: &str) -> usize {
    crate::process::sweep(&[token.to_string()])
}

/// Makes this process start its helper roles — the reaper and the sandbox launcher — as
/// `program args…` (with `HARNESS_RUNTIME_ROLE` set to the role) instead of re-executing itself
/// without arguments (once per process; later calls are ignored). For test binaries under
/// libtest's own harness: point it at an ignored test that calls
/// [`runner::run_role`](crate::runner::run_role), or at a binary whose `main` does.
pub fn use_role_command(program: PathBuf, args: Vec<String>) {
    crate::process::set_role_command(program, args);
}

/// Makes this process start the fixture agent as `program serve …` instead of re-executing
/// itself (once per process; later calls are ignored; `LIVE_FIXTURE_BIN` still wins). For test
/// binaries under libtest's own harness, whose `main` cannot dispatch the fixture role.
pub fn use_fixture_program(program: PathBuf) {
    crate::fixture::set_program(program);
}

/// Hands `token` to this process's reaper (started on first use), as provisioning does.
pub fn register_with_reaper(token: &str) -> std::io::Result<()> {
    crate::process::register_token(token)
}

/// A reaper of its own, to play the runner's part and then "die" by closing the pipe.
#[derive(Debug)]
pub struct Reaper(crate::process::ReaperHandle);

impl Reaper {
    /// Starts `program args…` in the reaper role.
    pub fn spawn(program: &Path, args: &[String]) -> std::io::Result<Self> {
        crate::process::ReaperHandle::spawn(program, args).map(Reaper)
    }

    /// Hands it a token.
    pub fn register(&mut self, token: &str) -> std::io::Result<()> {
        self.0.register(token)
    }

    /// Closes the pipe as a dying runner would; true when the reaper exited within `ceiling`.
    pub fn close_and_wait(self, ceiling: Duration) -> bool {
        self.0.close_and_wait(ceiling)
    }
}

/// How long an exploring run's scheduler waits for the system to be quiet before it lets a held
/// step go: `LIVE_EXPLORE_QUIET` or 30 ms, scaled by `LIVE_TIMEOUT_SCALE`.
pub fn explore_quiet() -> Duration {
    crate::settings::explore_quiet()
}

/// An exploring run's scheduler installed outside the runner, on the gates of a context
/// ([`Live::gates`]) or of a standalone [`Forwarder`]: for the benchmark's cost of one explored
/// schedule. It holds the same decision points an exploring scenario's run holds by default,
/// waits for quiet as long (`LIVE_EXPLORE_QUIET`, scaled), and takes the default order at every
/// decision (the schedule `fifo`): what a run costs does not depend on which step goes.
/// Dropping it stops the scheduler, letting everything held go.
#[derive(Debug)]
pub struct ExploringRun(std::sync::Arc<crate::explore::Scheduler>);

impl ExploringRun {
    /// Installs a scheduler on `gates`, on the current tokio runtime (its driver is a task);
    /// `None` when `gates` already has one (a scheduler is installed once per run).
    pub fn fifo(gates: &crate::gates::Gates) -> Option<ExploringRun> {
        if gates.scheduler().is_some() {
            return None;
        }
        let plan = crate::explore::Plan::Replay(crate::explore::Schedule::default());
        let scheduler = crate::explore::Scheduler::start(
            plan.strategy(),
            crate::settings::explore_quiet(),
            crate::explore::Focus::all(),
        );
        gates.explore_with(scheduler.clone());
        Some(ExploringRun(scheduler))
    }

    /// Steps released so far, and how many of them were decisions (several held at once).
    pub fn released(&self) -> (usize, usize) {
        let record = self.0.record();
        (record.released.len(), record.decisions.len())
    }
}

impl Drop for ExploringRun {
    fn drop(&mut self) {
        self.0.stop();
    }
}
