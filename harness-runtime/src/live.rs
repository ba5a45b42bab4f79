//! The per-scenario context handed to every `#[live_agent_test]` function.
//!
//! Every method a scenario calls is declared here; the work is done by the subsystems
//! (`opencode`, `model`, `gates`, `fixture`, `evidence`).

use std::path::PathBuf;
use std::sync::Arc;

use crate::any_agent::{AnyAgent, AnyAgentError, AnyAgentKind};
use crate::evidence::Evidence;
use crate::fixture::FixtureControl;
use crate::gates::Gates;
use crate::model::ScriptedModel;
use crate::opencode::{Agent, AgentOptions, ProvisionContext, ProvisionError};
use crate::redact::Redactor;
use crate::scenario::{DeclaredOptions, ScenarioOptions};

/// What a scenario knows about itself.
///
/// Open (public fields, no `#[non_exhaustive]`): a runner of one's own builds it as a literal,
/// through `testing`, which is outside semver.
#[derive(Clone, Debug)]
pub struct ScenarioInfo {
    /// `<topic>::<fn>`.
    pub name: String,
    /// The attribute's options, as its expansion builds them
    /// (`harness_runtime::__private::ScenarioOptions { .., ..ScenarioOptions::DEFAULT }`).
    pub options: ScenarioOptions,
    /// The test crate's manifest dir: `snapshots/` lives below it.
    pub manifest_dir: PathBuf,
    /// Asserts the evidence snapshot from the scenario's own file and crate:
    /// `harness_runtime::snapshot_assertion!()` where a context is made by hand.
    pub snapshot_assertion: crate::evidence::snapshot::SnapshotAssertion,
}

/// The context of one scenario: provisions agents, scripts the model, gates operations and
/// records redacted evidence. Everything it started is stopped when the scenario ends, whether
/// it passed, failed, panicked or timed out.
// The fields are private: the runner sets a context up through `for_run` and reads its end
// through narrow methods, so this file alone says what a scenario's context holds and when.
pub struct Live {
    info: ScenarioInfo,
    redactor: Arc<Redactor>,
    evidence: Evidence,
    model: crate::model::ModelSlot,
    /// Before `agents`: dropped (killed) first, since products talk to them.
    products: crate::product::ProductSlot,
    agents: crate::opencode::AgentSlot,
    /// The ACP agents it started (`acp_agent`), stopped with the others.
    acp_agents: crate::acp::AcpSlot,
    fixture: crate::fixture::FixtureControl,
    gates: Arc<crate::gates::Gates>,
    wire: Arc<crate::forward::Wire>,
    skip: Option<Skip>,
    /// A cassette scenario's: the OpenCode version its agent reported (a recording's
    /// provenance), and what its end says for the report (a verifying run's drift).
    cassette: CassetteRun,
    /// What the scenario's turns spent, measured when it finished (for the run report).
    spend: Option<crate::budget::Spend>,
    /// In an exploring scenario's run: the evidence every run must agree on.
    baseline: Option<Arc<crate::evidence::Baseline>>,
    /// A later run of an exploring scenario: provisioning's progress lines (which server,
    /// which sandbox) said it once already.
    repeated: bool,
    /// The shared servers its runner owns. Last: dropped after the agents that lease them.
    pool: Arc<crate::opencode::SharedPool>,
}

/// How the runner sets up one run of a scenario's body, beyond what the scenario declares.
#[derive(Default)]
pub(crate) struct RunSetup {
    /// The model plan the trial was admitted with; `None`: resolved from the scenario's
    /// options and `LIVE_CASSETTE`, falling back to the scripted model.
    pub(crate) plan: Option<crate::cassette::ModelPlan>,
    /// A later run of the same trial (a verdict's, an exploration's): provisioning's progress
    /// lines said it once already.
    pub(crate) repeated: bool,
    /// The environment the scenario's relay reads instead of the process's
    /// (`testing::live_with_cassette_env`).
    pub(crate) relay_env: Option<crate::model::slot::RelayEnv>,
    /// One run of an exploring scenario: the scheduler ordering the decision points of its
    /// products' traffic, and the evidence every run must agree on.
    pub(crate) explore: Option<(
        Arc<crate::explore::Scheduler>,
        Arc<crate::evidence::Baseline>,
    )>,
}

/// What a cassette scenario's run learns for its cassette and its report.
#[derive(Clone, Debug, Default)]
pub(crate) struct CassetteRun {
    /// The OpenCode version the first agent reported (`GET /global/health`) while recording or
    /// verifying.
    pub(crate) opencode: Option<String>,
    /// The line the report shows: a verifying run's drift, or that it found none.
    pub(crate) note: Option<String>,
}

/// Why a scenario ended as skipped rather than passed or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skip {
    pub(crate) reason: String,
    /// A missing prerequisite (the OpenCode binary): failed instead under `CI` or
    /// `LIVE_STRICT=1`. A capability the agent did not exercise is skipped in every mode.
    pub(crate) strict_fails: bool,
}

/// The error a scenario returns after [`Live::skip`]: the runner reports the scenario as
/// skipped with the reason, whatever the body returned after it.
#[derive(Debug, thiserror::Error)]
#[error("skipped: {reason}")]
pub struct Skipped {
    reason: String,
}

/// What went wrong ending a scenario after its body. Its message is redacted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FinishError {
    /// The model's part: requests nothing answered, a script's mistakes, a cassette's recorded
    /// requests nobody sent, or a recording that could not be written.
    #[error("{0}")]
    Model(String),
    /// The agents' part: a server that did not stop, or a root that could not be removed.
    #[error("{0}")]
    Agents(String),
    /// The products' part: a product that exited unsuccessfully or was still running at the
    /// end when the scenario did not expect it, or one that could not be stopped; with the
    /// tail of its output.
    #[error("{0}")]
    Product(String),
    /// The real model's upstream kept answering 429 or 5xx after the relay's retries: how
    /// often, and what to do (after a failing body only: it explains the failure).
    #[error("{0}")]
    Upstream(String),
    /// Limits of the scenario's budget (`max_tokens`, `max_cost`, `max_first_token`,
    /// `max_turn`, …) its turns broke: each with the figure and the limit, one per line.
    #[error("{0}")]
    Budget(String),
    /// Wire or product gates the scenario armed that nothing ever entered (a product that
    /// never sent that request, or never passed that point): named by their spelling.
    #[error(
        "armed but never reached: {0}; the product never got there (check the spelling, the \
         Nth you armed, and that the product is pointed at `agent.forwarded_url()`)"
    )]
    UnreachedGates(String),
}

impl Live {
    /// A context for the scenario `info`, set up as a trial's only run, whose agents share the
    /// servers of `pool`. The runner makes every context with [`for_run`](Self::for_run).
    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn new(info: ScenarioInfo, pool: Arc<crate::opencode::SharedPool>) -> Self {
        Self::for_run(info, pool, RunSetup::default())
    }

    /// A context for one run of the scenario `info`, set up as `run` says, whose agents share
    /// the servers of `pool`. The runner makes one per run, on the pool of its run.
    pub(crate) fn for_run(
        info: ScenarioInfo,
        pool: Arc<crate::opencode::SharedPool>,
        run: RunSetup,
    ) -> Self {
        let redactor = Arc::new(Redactor::for_scenario());
        // Diagnostics name programs under the checkout (the test binary re-executed as the
        // fixture agent, `node_modules/.bin/opencode`): where a user cloned is not evidence.
        redactor.add_path(&info.manifest_dir, "[crate]");
        let mut model = crate::model::ModelSlot::default();
        // The runner resolved the same plan before this context and failed the scenario on an
        // error; a context made by hand (`testing::live`) falls back to the scripted model.
        let plan = run.plan.unwrap_or_else(|| {
            crate::cassette::plan(&info.options, &info.name, &info.manifest_dir).unwrap_or_default()
        });
        model.set_plan(plan, &info.name);
        model.set_api(info.options.model_api);
        if let Some(env) = run.relay_env {
            model.set_relay_env(env);
        }
        let gates = Arc::new(
            // The attribute's gate names were validated at compile time by the macro.
            crate::gates::Gates::from_names(info.options.gates)
                .unwrap_or_else(|e| panic!("invalid `gate` option: {e}")),
        );
        let baseline = run.explore.map(|(scheduler, baseline)| {
            model.explore_with(scheduler.clone());
            gates.explore_with(scheduler);
            baseline
        });
        Self {
            evidence: Evidence::new(redactor.clone()),
            model,
            products: Default::default(),
            agents: Default::default(),
            acp_agents: Default::default(),
            fixture: Default::default(),
            gates,
            wire: Arc::new(crate::forward::Wire::new(redactor.clone())),
            redactor,
            info,
            skip: None,
            cassette: CassetteRun::default(),
            spend: None,
            baseline,
            repeated: run.repeated,
            pool,
        }
    }

    /// Whether the scenario ended as skipped ([`skip`](Self::skip), a missing OpenCode).
    pub(crate) fn is_skipped(&self) -> bool {
        self.skip.is_some()
    }

    /// Why the scenario ended as skipped, taken for the runner's verdict.
    pub(crate) fn take_skip(&mut self) -> Option<Skip> {
        self.skip.take()
    }

    /// What the scenario's turns spent, once [`finish`](Self::finish) measured it.
    pub(crate) fn spend(&self) -> Option<&crate::budget::Spend> {
        self.spend.as_ref()
    }

    /// A cassette scenario's line for the report: a verifying run's drift, or that it found
    /// none; set by [`finish`](Self::finish).
    pub(crate) fn cassette_note(&self) -> Option<&str> {
        self.cassette.note.as_deref()
    }

    /// Ends the scenario as skipped with `reason`: for a capability the agent did not exercise
    /// (the model answered in prose instead of calling the tool), which is neither a pass nor a
    /// failure. Return the result: `return Err(live.skip("the model did not call the tool").into())`.
    /// The reason is shown by `cargo test` and counts as skipped in every mode, `LIVE_STRICT`
    /// included. nextest has no status for a test that ran and skipped: there it passes with a
    /// `LIVE SKIPPED <scenario>: <reason>` line (fails under `LIVE_NEXTEST_SKIP=fail`).
    pub fn skip(&mut self, reason: impl Into<String>) -> Skipped {
        self.skip_with(reason.into(), false)
    }

    /// Ends the scenario for a missing prerequisite of its own (a program such as `node`, a
    /// package): skipped with `reason` locally, failed with it under `CI` or `LIVE_STRICT=1` —
    /// the rule the harness applies to a missing OpenCode, so a CI machine without it cannot
    /// pass silently. Say what to install in `reason`, and return the result:
    /// `return Err(live.missing_prerequisite("node not found in PATH: install Node.js").into())`.
    pub fn missing_prerequisite(&mut self, reason: impl Into<String>) -> Skipped {
        self.skip_with(reason.into(), true)
    }

    /// Marks the scenario skipped with `reason`, redacted; `strict_fails`: a missing
    /// prerequisite, failed instead under `CI` or `LIVE_STRICT=1`.
    fn skip_with(&mut self, reason: String, strict_fails: bool) -> Skipped {
        let reason = self.redactor.redact(&reason);
        self.skip = Some(Skip {
            reason: reason.clone(),
            strict_fails,
        });
        Skipped { reason }
    }

    /// The scenario's name, `<topic>::<fn>`.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// What the scenario's `#[live_agent_test(...)]` declared.
    pub fn options(&self) -> DeclaredOptions {
        DeclaredOptions::of(self.info.options)
    }

    /// The redactor every output of this scenario passes through.
    pub fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// Whether the agents this scenario provisions run confined by the sandbox: `false` under
    /// `LIVE_SANDBOX=0`, or where Landlock is missing and that is allowed (locally, where their
    /// progress line warns). Under `CI` or `LIVE_STRICT=1` a missing sandbox fails provisioning
    /// instead, so this is `true` there. For scenarios that test the sandbox itself, to skip
    /// where it is off rather than fail.
    pub fn sandboxed(&self) -> bool {
        crate::sandbox::current().map_or(true, |sandbox| sandbox.is_on())
    }

    /// Registers a value that must never appear in evidence, output or failure messages.
    pub fn secret(&self, value: impl AsRef<str>) {
        self.redactor.add_secret(value.as_ref());
    }

    /// Prints a progress line on stderr (redacted): libtest-mimic prints a result only at the end,
    /// so long scenarios say what they are doing and waiting for.
    pub fn progress(&self, message: impl AsRef<str>) {
        progress(&self.info.name, &self.redactor, message.as_ref());
    }

    /// Provisions an agent with the default [`AgentOptions`]: a real `opencode serve` (or the
    /// fixture agent, per the scenario's `agent` option) in its own isolated root, pointed at the
    /// scripted model (or at `OPENCODE_CONFIG_CONTENT` when the scenario requires it), and
    /// waits until it answers.
    ///
    /// A scenario marked `#[live_agent_test(cassette)]` gets the real model instead, served as
    /// `LIVE_CASSETTE` says: replayed from `cassettes/<topic>__<fn>.json` when it exists (no
    /// model variables needed), else the real model of `TEST_OLLAMA_MODEL` and
    /// `OPENCODE_CONFIG_CONTENT` (recorded into that file under `LIVE_CASSETTE=record`).
    pub async fn opencode(&mut self) -> Result<Agent, ProvisionError> {
        self.opencode_with(AgentOptions::default()).await
    }

    /// [`opencode`](Self::opencode) with explicit options.
    pub async fn opencode_with(&mut self, options: AgentOptions) -> Result<Agent, ProvisionError> {
        let (name, redactor, repeated) = (&self.info.name, &self.redactor, self.repeated);
        let scenario = ProvisionContext {
            name,
            options: &self.info.options,
            manifest_dir: &self.info.manifest_dir,
            model: &mut self.model,
            redactor,
            gates: &self.gates,
            wire: &self.wire,
            fixture: &self.fixture,
            agents: &mut self.agents,
            pool: &self.pool,
            progress: &|message| {
                if !repeated {
                    progress(name, redactor, message);
                }
            },
        };
        let provisioned = crate::opencode::provision(scenario, options).await;
        // Nothing installed is not this scenario's fault: report it skipped (failed under CI or
        // LIVE_STRICT=1). A wrong LIVE_OPENCODE_BIN is a mistake: it fails.
        if let Err(e @ ProvisionError::OpenCodeNotFound) = &provisioned {
            self.skip_with(e.to_string(), true);
        }
        if let Ok(agent) = &provisioned {
            self.note_opencode_version(agent).await;
        }
        provisioned
    }

    /// Starts an ACP agent of `kind` (see [`AcpAgentKind`](crate::acp::AcpAgentKind)) in a
    /// root of its own, owned and confined like `opencode serve`, pointed at the scenario's model
    /// (the scripted model, or its real model), and initialized: its stdin and stdout speak ACP,
    /// its stderr goes to the root's `stderr.log` and every protocol line to `acp.log`. It is
    /// stopped when the scenario ends; its root is kept after a failure.
    ///
    /// A missing agent program is a missing prerequisite: the scenario is skipped saying what
    /// to install (failed under `CI` or `LIVE_STRICT=1`).
    pub async fn acp_agent(
        &mut self,
        kind: crate::acp::AcpAgentKind,
    ) -> Result<crate::acp::AcpAgent, crate::acp::AcpError> {
        self.acp_agent_with(kind, AgentOptions::default()).await
    }

    /// [`acp_agent`](Self::acp_agent) with explicit options: the product's config layer (e.g.
    /// which tools ask for permission), extra environment, paths it may read or write. Options
    /// about servers (readiness, sharing, a fresh workspace) do not apply.
    pub async fn acp_agent_with(
        &mut self,
        kind: crate::acp::AcpAgentKind,
        options: AgentOptions,
    ) -> Result<crate::acp::AcpAgent, crate::acp::AcpError> {
        let launch = self.prepare_acp(kind, options)?;
        let root = launch.root.root.clone();
        let started =
            crate::acp::AcpAgent::start(kind, launch, self.redactor.clone(), self.gates.clone())
                .await;
        match started {
            Ok(agent) => {
                self.acp_agents.push(agent.clone());
                Ok(agent)
            }
            Err(e) => {
                eprintln!("kept scenario root: {}", root.display());
                Err(e)
            }
        }
    }

    /// Which agent this scenario runs on: the one its `agents = [...]` entry names (a scenario
    /// listing three agents is three scenarios, `…::opencode_http`, `…::opencode_acp`,
    /// `…::qwen_code`), or OpenCode over HTTP when it lists none.
    pub fn any_agent_kind(&self) -> AnyAgentKind {
        self.options()
            .any_agent()
            .unwrap_or(AnyAgentKind::OpenCodeHttp)
    }

    /// Starts the agent this scenario runs on ([`any_agent_kind`](Self::any_agent_kind)):
    /// [`opencode`](Self::opencode) for OpenCode over HTTP, [`acp_agent`](Self::acp_agent)
    /// for an ACP agent, with their rules (a missing program skips the scenario, failed under
    /// `CI`/`LIVE_STRICT=1`).
    pub async fn any_agent(&mut self) -> Result<AnyAgent, AnyAgentError> {
        self.any_agent_with(AgentOptions::default()).await
    }

    /// [`any_agent`](Self::any_agent) with explicit options. The `permission` rules apply to
    /// every agent as each understands them (Qwen Code asks by mode: any `ask` rule makes it
    /// ask before edits and shell commands); an OpenCode `config` only to OpenCode.
    pub async fn any_agent_with(
        &mut self,
        options: AgentOptions,
    ) -> Result<AnyAgent, AnyAgentError> {
        match self.any_agent_kind().acp() {
            None => Ok(AnyAgent::OpenCodeHttp(self.opencode_with(options).await?)),
            Some(kind) => Ok(AnyAgent::Acp(self.acp_agent_with(kind, options).await?)),
        }
    }

    /// Skips the scenario, saying so, unless `agent` advertises `capability` (a path into its
    /// [`capabilities`](AnyAgent::capabilities), e.g. `sessionCapabilities.close`): a
    /// scenario about a capability neither passes nor fails on an agent without it.
    /// `live.require_capability(&agent, "loadSession")?;`
    pub fn require_capability(
        &mut self,
        agent: &AnyAgent,
        capability: &str,
    ) -> Result<(), Skipped> {
        if agent.advertises(capability) {
            Ok(())
        } else {
            Err(self.skip(format!(
                "{} does not advertise `{capability}` at initialize",
                agent.kind()
            )))
        }
    }

    /// An ACP agent of `kind` for a product that is an ACP client to drive: started as
    /// [`acp_agent_with`](Self::acp_agent_with) starts one, but spoken to by the product, not
    /// by the harness. Give the relay to [`start_acp_product`](Self::start_acp_product): the
    /// product finds the agent command in `LIVE_ACP_AGENT_COMMAND` and runs it as its agent;
    /// every line between them passes the scenario's `acp …` gates and is counted
    /// ([`AcpRelay::traffic`](crate::acp::AcpRelay::traffic)).
    pub async fn acp_agent_for_product(
        &mut self,
        kind: crate::acp::AcpAgentKind,
        options: AgentOptions,
    ) -> Result<crate::acp::AcpRelay, crate::acp::AcpError> {
        let launch = self.prepare_acp(kind, options)?;
        let root = launch.root.root.clone();
        let started =
            crate::acp::AcpRelay::start(kind, launch, self.redactor.clone(), self.gates.clone())
                .await;
        match started {
            Ok(relay) => {
                self.acp_agents.push_relay(relay.clone());
                Ok(relay)
            }
            Err(e) => {
                eprintln!("kept scenario root: {}", root.display());
                Err(e)
            }
        }
    }

    /// Starts a product that is an ACP client, owned and confined as
    /// [`start_product`](Self::start_product) starts one, with `LIVE_ACP_AGENT_COMMAND` (the
    /// agent command reaching `relay`) and `LIVE_AGENT_DIRECTORY` (the agent's workspace) in
    /// its environment.
    pub async fn start_acp_product(
        &self,
        relay: &crate::acp::AcpRelay,
        command: crate::product::ProductCommand,
    ) -> Result<crate::product::Product, crate::product::ProductError> {
        self.products.start_acp(relay, command, &self.redactor)
    }

    /// The start of an ACP agent of `kind`, prepared; a missing program skips the scenario.
    fn prepare_acp(
        &mut self,
        kind: crate::acp::AcpAgentKind,
        options: AgentOptions,
    ) -> Result<crate::opencode::StdioLaunch, crate::acp::AcpError> {
        let index = self.agents.len() + self.acp_agents.len() + 1;
        let prepared = match kind {
            crate::acp::AcpAgentKind::OpenCode => {
                crate::opencode::prepare_opencode_acp(crate::opencode::AcpContext {
                    name: &self.info.name,
                    options: &self.info.options,
                    manifest_dir: &self.info.manifest_dir,
                    model: &mut self.model,
                    redactor: &self.redactor,
                    index,
                    agent: options,
                })
                .map_err(crate::acp::AcpError::from)
            }
            crate::acp::AcpAgentKind::QwenCode => crate::acp::prepare_qwen(
                &self.info.name,
                &self.info.manifest_dir,
                &mut self.model,
                &self.redactor,
                index,
                options,
            ),
            crate::acp::AcpAgentKind::GeminiCli => crate::acp::prepare_gemini(
                &self.info.name,
                &self.info.manifest_dir,
                &mut self.model,
                &self.redactor,
                index,
                options,
            ),
        };
        let launch = match prepared {
            Ok(launch) => launch,
            // Nothing installed is not this scenario's fault: skipped (failed under CI or
            // LIVE_STRICT=1).
            Err(
                e @ (crate::acp::AcpError::AgentNotFound { .. }
                | crate::acp::AcpError::Provision(ProvisionError::OpenCodeNotFound)),
            ) => {
                self.skip_with(e.to_string(), true);
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        if !self.repeated {
            progress(&self.info.name, &self.redactor, &launch.sandbox_line);
        }
        Ok(launch)
    }

    /// While recording (or verifying) a cassette: the OpenCode version as the server reports
    /// itself, else its npm package's, for the cassette's provenance. Once per scenario.
    async fn note_opencode_version(&mut self, agent: &Agent) {
        let recording = matches!(self.model.plan(), crate::model::ModelPlan::Record { .. });
        if !recording || self.cassette.opencode.is_some() {
            return;
        }
        let reported = agent
            .client()
            .health()
            .await
            .ok()
            .map(|health| health.version);
        self.cassette.opencode = reported
            .filter(|version| !version.is_empty())
            .or_else(|| crate::opencode::installed_version(&self.info.manifest_dir));
    }

    /// Starts a product that is a program (a CLI, a Node app on `@opencode-ai/sdk`) against
    /// `agent`, owned like an agent: its own process group and owner mark, stopped when the
    /// scenario ends (SIGTERM, SIGKILL after a grace, reap, sweep of its descendants), killed by
    /// the reaper if the runner dies. It gets `LIVE_AGENT_URL` (the agent's URL) and
    /// `LIVE_AGENT_DIRECTORY` (its workspace) in its environment and runs in the workspace;
    /// when the scenario's agents are confined ([`sandboxed`](Self::sandboxed)), so is it: it
    /// writes only beneath the agent's root, reads the system's directories and its own
    /// program (see [`ProductCommand`](crate::product::ProductCommand)), and connects to its
    /// agent only. Its output is captured, redacted, and shown on the run report.
    ///
    /// At the scenario's end a product that exited unsuccessfully, or is still running, fails
    /// the scenario with the tail of its output, unless the scenario said so
    /// ([`Product::expect_failure`](crate::product::Product::expect_failure),
    /// [`Product::expect_running`](crate::product::Product::expect_running)).
    pub async fn start_product(
        &self,
        agent: &Agent,
        command: crate::product::ProductCommand,
    ) -> Result<crate::product::Product, crate::product::ProductError> {
        self.products.start(agent, command, &self.redactor)
    }

    /// The scenario's scripted model (started on first use, on the scenario's runtime):
    /// queue replies, add rules, read the requests it received.
    ///
    /// Panics outside the scenario's runtime or when loopback cannot be bound.
    pub fn model(&self) -> &ScriptedModel {
        match self.model.model() {
            Ok(model) => model,
            Err(error) => panic!("{error}"),
        }
    }

    /// Asks the relay to the real model (recording or live) to pass the upstream's 429 and 5xx
    /// answers on as they come, each recorded in the cassette, instead of retrying them: for a
    /// scenario about how OpenCode meets those errors. Call it before the first agent's turn.
    /// Scripted and replayed scenarios are unaffected.
    pub fn record_upstream_errors(&self) {
        self.model.record_upstream_errors();
    }

    /// The scenario's gates and counters: arm a point, wait until an operation entered it,
    /// release it; read how many prompts, replies, aborts and process exits happened.
    pub fn gates(&self) -> &Gates {
        &self.gates
    }

    /// The scenario's wire, between its products and its agents: faults a forwarder injects
    /// (answer a route once, delay it, drop the product's event stream) and the log of the
    /// product's requests and events, for products that reach an agent at
    /// [`Agent::forwarded_url`].
    pub fn wire(&self) -> &crate::forward::Wire {
        &self.wire
    }

    /// The fixture agent's fault controls (meaningful for `agent = fixture` scenarios).
    pub fn fixture(&self) -> &FixtureControl {
        &self.fixture
    }

    /// Ends the scenario: stops and judges every product it started, reports unanswered model
    /// requests, stops every agent it started, and removes its roots after a pass (keeps them,
    /// printing their paths, after a failure).
    /// The runner calls this after the body, whatever its outcome; `Drop` of the slots is the
    /// synchronous fallback when it cannot run (a panic inside the runtime, a killed runtime).
    pub(crate) async fn finish(&mut self, passed: bool) -> Result<(), FinishError> {
        // Read before teardown releases everything. Only after a passing body: a failed one
        // already says what went wrong, and its unreached gates would only repeat it.
        let unreached = self.gates.unreached();
        let gates = if passed && !unreached.is_empty() {
            let named: Vec<String> = unreached.iter().map(|g| format!("`{g}`")).collect();
            Err(FinishError::UnreachedGates(named.join(", ")))
        } else {
            Ok(())
        };
        // An armed gate must never hold teardown (e.g. `stop` armed by a scenario that failed
        // before releasing it).
        self.gates.release_all();
        // Products first: they talk to the agents and, through them, to the model.
        let products = self.products.finish().await.map_err(FinishError::Product);
        let budget = self.spent(passed).await;
        let (name, redactor) = (&self.info.name, &self.redactor);
        let upstream = match crate::cassette::upstream_gave_up(&self.model) {
            Some(note) if !passed => Err(FinishError::Upstream(redactor.redact(&note))),
            _ => Ok(()),
        };
        let end = crate::cassette::RunEnd {
            verdict: match &self.skip {
                Some(skip) => crate::cassette::Verdict::Skipped {
                    reason: skip.reason.clone(),
                },
                None if passed => crate::cassette::Verdict::Passed,
                None => crate::cassette::Verdict::Failed,
            },
            opencode: self.cassette.opencode.clone(),
        };
        let model = crate::cassette::finish_scenario(&mut self.model, redactor, end, &|message| {
            progress(name, redactor, message)
        })
        .map(|note| self.cassette.note = note)
        .map_err(|error| FinishError::Model(redactor.redact(&error.to_string())));
        let agents = self
            .finish_agents(
                passed && model.is_ok() && products.is_ok() && gates.is_ok() && budget.is_ok(),
            )
            .await;
        gates
            .and(products)
            .and(budget)
            .and(upstream)
            .and(model)
            .and(agents)
    }

    /// The agents' part of [`finish`](Self::finish): stops every agent this context started,
    /// OpenCode's and ACP ones, removes their roots when `passed` (keeps and prints them
    /// otherwise).
    pub(crate) async fn finish_agents(&mut self, passed: bool) -> Result<(), FinishError> {
        let agents = self
            .agents
            .finish(passed, &self.redactor)
            .await
            .map_err(FinishError::Agents);
        // ACP agents too: left to the slot's drop they would be killed and their roots kept.
        let acp_agents = self
            .acp_agents
            .finish(passed && agents.is_ok(), &self.redactor)
            .await
            .map_err(FinishError::Agents);
        agents.and(acp_agents)
    }

    /// Measures what the turns spent, before the agents stop (kept for the run report; a
    /// live-model scenario's added to the run's ceiling), and checks the budget: a breach is a
    /// verdict on a run that otherwise `passed` (a skip or a failure already says how it ended).
    /// A recording that breached is still written: its replay breaches the same way.
    async fn spent(&mut self, passed: bool) -> Result<(), FinishError> {
        let budget = &self.info.options.budget;
        let live_model = crate::budget::is_live_model(self.model.plan());
        let exact = budget.is_limited() || live_model;
        let spend = crate::budget::measure(&self.agents, &self.model, exact).await;
        let scale = crate::settings::timeout_scale().unwrap_or(1.0);
        let breaches = crate::budget::breaches(budget, &spend, scale);
        for limit in crate::budget::unchecked(budget, &spend) {
            progress(
                &self.info.name,
                &self.redactor,
                &format!(
                    "budget: {limit} not checked: no model request streamed an answer to time"
                ),
            );
        }
        if live_model {
            crate::budget::add_to_run(&spend);
        }
        self.spend = Some(spend);
        if passed && self.skip.is_none() && !breaches.is_empty() {
            Err(FinishError::Budget(breaches.join("\n")))
        } else {
            Ok(())
        }
    }

    /// The ordered recorder of this scenario's evidence.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }

    /// Asserts the recorded evidence against `snapshots/<topic>__<fn>.snap` of the test crate.
    ///
    /// A mismatch prints insta's diff and panics (the runner reports the panic as the failure).
    /// What happens to the new value follows insta: `INSTA_UPDATE=new` (the default outside CI)
    /// writes `.snap.new` for `cargo insta review`, `always` overwrites, `no` (the default when
    /// `CI` is set) writes nothing. `LIVE_SNAPSHOT_DIR` moves the snapshot folder elsewhere.
    ///
    /// In an exploring scenario (`explore = N`) the first run asserts the snapshot and every
    /// later run's evidence must equal the first run's: a difference fails that run, with the
    /// lines that differ.
    pub fn assert_evidence(&self) {
        self.assert_evidence_as(None);
    }

    /// Like [`assert_evidence`](Self::assert_evidence), against
    /// `snapshots/<topic>__<fn>@<name>.snap`: for a scenario that checks evidence more than once.
    /// Characters other than ASCII letters, digits, `-`, `_` and `.` in `name` become `_`.
    pub fn assert_evidence_named(&self, name: &str) {
        assert!(
            !name.trim().is_empty(),
            "assert_evidence_named needs a non-empty name"
        );
        self.assert_evidence_as(Some(name));
    }

    fn assert_evidence_as(&self, name: Option<&str>) {
        if let Some(baseline) = &self.baseline {
            match baseline.check(name.unwrap_or_default(), &self.evidence) {
                Ok(false) => return,
                Ok(true) => {}
                Err(differs) => panic!(
                    "the evidence differs from the first run's under this schedule (an \
                     exploring scenario's evidence must not depend on the ordering; assert \
                     what every ordering shares):\n{}",
                    self.redactor.redact(&differs.diff)
                ),
            }
        }
        crate::evidence::assert_evidence(
            self.snapshot_target(),
            &self.redactor,
            &self.evidence,
            name,
        );
        if let Some(baseline) = &self.baseline {
            baseline.accepted(name.unwrap_or_default(), &self.evidence);
        }
    }

    fn snapshot_target(&self) -> crate::evidence::SnapshotTarget<'_> {
        crate::evidence::SnapshotTarget {
            name: &self.info.name,
            manifest_dir: &self.info.manifest_dir,
            assertion: self.info.snapshot_assertion,
        }
    }
}

/// A progress line of the scenario `name` on stderr, redacted.
fn progress(name: &str, redactor: &Redactor, message: &str) {
    crate::progress::progress(name, &redactor.redact(message));
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Compiles only while provisioning can run on a spawned task (`tokio::spawn` needs a
    /// `Send` future): a guard or `Cell` held across an await would break users' scenarios.
    #[allow(dead_code)]
    fn provisioning_is_send(live: &mut super::Live) {
        fn send<T: Send>(_: T) {}
        send(live.opencode());
    }

    /// A missing prerequisite is a skip the runner turns into a failure under `CI` or
    /// `LIVE_STRICT=1` (`strict_fails`); a plain skip is not; both reasons are redacted.
    #[test]
    fn a_missing_prerequisite_is_a_strict_skip_and_a_skip_is_not() {
        let info = super::ScenarioInfo {
            name: "live::prerequisite".into(),
            options: crate::scenario::ScenarioOptions::DEFAULT,
            manifest_dir: std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
            snapshot_assertion: crate::__snapshot_assertion!(),
        };
        let mut live = super::Live::new(info.clone(), Default::default());
        live.secret("hunter2-secret");
        let skipped = live.missing_prerequisite("node not found: hunter2-secret");
        assert_eq!(skipped.to_string(), "skipped: node not found: [secret]");
        let skip = live.skip.clone().unwrap();
        assert!(skip.strict_fails);
        let mut live = super::Live::new(info, Default::default());
        let _ = live.skip("the model answered in prose");
        assert!(!live.skip.clone().unwrap().strict_fails);
    }

    /// Lines of Rust under `dir` that open an inherent `impl` block of `Live`, as `file: line`.
    fn live_impl_blocks(dir: &Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                live_impl_blocks(&path, found);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let line = line.trim();
                let opens = line.strip_prefix("impl ").and_then(|l| l.strip_suffix('{'));
                let inherent = opens.is_some_and(|l| {
                    let target = l.trim().rsplit("::").next().unwrap_or_default();
                    target == "Live" && !l.contains(" for ")
                });
                if inherent {
                    found.push(format!("{}: {line}", path.display()));
                }
            }
        }
    }

    /// A scenario author reads `Live`'s whole API in this one file: no subsystem adds methods
    /// to it in a block of its own.
    #[test]
    fn every_method_of_live_is_declared_in_this_file() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        live_impl_blocks(&src, &mut found);
        let here = src.join("live.rs").display().to_string();
        found.retain(|block| !block.starts_with(&format!("{here}:")));
        assert!(
            found.is_empty(),
            "impl blocks of Live elsewhere: {found:#?}"
        );
    }
}
