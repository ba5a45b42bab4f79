//! `live.opencode()`: choose the backend and config, create the root, spawn, wait until ready.

use std::path::Path;
use std::sync::Arc;

use super::pool::{self, PoolLease, SharedPool};
use super::root::AgentRoot;
use super::server_process::{Launch, ServerProcess};
use super::{
    Agent, AgentOptions, AgentSlot, ModelsCatalog, ProvisionError, config, discover,
    provider_package, sandbox_plan,
};
use crate::Isolation;
use crate::fixture::FixtureControl;
use crate::gates::Gates;
use crate::model::ModelSlot;
use crate::redact::Redactor;
use crate::scenario::{AgentKind, ScenarioOptions};

/// What provisioning uses of the scenario it provisions for.
pub(crate) struct ProvisionContext<'a> {
    /// `<topic>::<fn>`: the root is named after it.
    pub(crate) name: &'a str,
    pub(crate) options: &'a ScenarioOptions,
    /// The test crate's manifest dir, where `node_modules/.bin/opencode` is looked for.
    pub(crate) manifest_dir: &'a Path,
    /// The scenario's model: its plan decides the config (`config::choose`).
    pub(crate) model: &'a mut ModelSlot,
    pub(crate) redactor: &'a Arc<Redactor>,
    pub(crate) gates: &'a Arc<Gates>,
    /// The scenario's wire: every agent's forwarder injects its faults and logs into it.
    pub(crate) wire: &'a Arc<crate::forward::Wire>,
    /// The fixture agent's faults, written into its home before it starts.
    pub(crate) fixture: &'a FixtureControl,
    /// The scenario's agents so far: the new one is tracked here before it starts.
    pub(crate) agents: &'a mut AgentSlot,
    /// The shared servers its runner owns, leased when the agent may share.
    pub(crate) pool: &'a SharedPool,
    /// Prints a progress line of the scenario.
    pub(crate) progress: &'a (dyn Fn(&str) + Sync),
}

/// Provisions an agent for the scenario: a real `opencode serve` (or the fixture agent, per the
/// scenario's `agent` option) in its own isolated root, or a directory on a shared server when
/// the scenario may share, pointed at the model its plan names (scripted, the user's real model
/// of `OPENCODE_CONFIG_CONTENT`, its relay while recording, a cassette's replay); returns once it
/// answers.
pub(crate) async fn provision(
    scenario: ProvisionContext<'_>,
    options: AgentOptions,
) -> Result<Agent, ProvisionError> {
    let kind = scenario.options.agent;
    let (program, mut env) = match kind {
        AgentKind::OpenCode => (discover::find_opencode(scenario.manifest_dir)?, Vec::new()),
        AgentKind::Fixture => {
            let spec = crate::fixture::launch_spec()
                .map_err(|e| ProvisionError::io("locate the fixture agent", e))?;
            (spec.program, spec.env)
        }
    };
    let model = scenario.model;
    let config = config::choose(
        &options,
        scenario.options,
        scenario.name,
        model,
        scenario.redactor,
    )?;
    config::register_secrets(&config, scenario.redactor);
    for (name, value) in &options.env {
        scenario.redactor.add_env(name, value);
    }

    // OpenCode's provider packages it would install at run time, installed beside it: its own
    // cache gets them, so they are never fetched.
    let packages = match kind {
        AgentKind::OpenCode => provider_package::to_seed(
            &config,
            crate::sandbox::program_node_modules(&program).as_deref(),
        ),
        AgentKind::Fixture => Vec::new(),
    };
    let plan = model.plan();
    let shareable = pool::check(scenario.options, plan, &options, scenario.agents.len()).and(
        match packages.is_empty() {
            true => Ok(()),
            false => Err(provider_package::OWN_CACHE),
        },
    );
    let share = pool::level(scenario.options) == Isolation::Shared
        && match shareable {
            Ok(()) => true,
            Err(reason) => {
                (scenario.progress)(&format!("a server of its own: {reason}"));
                false
            }
        };

    // Before anything is created: under CI or LIVE_STRICT=1 an unavailable sandbox fails here.
    let sandbox = crate::sandbox::current().map_err(ProvisionError::Sandbox)?;
    let placement = Placement::choose(share, &config, &options);
    let shared_line = match sandbox.is_on() {
        true => format!(
            "{}; {}",
            sandbox.line(sandbox_plan::tcp_open(&config).as_deref()),
            sandbox_plan::SHARED_SCOPE
        ),
        false => sandbox.line(None),
    };
    let index = scenario.agents.len() + 1;
    let whose = Whose {
        name: scenario.name,
        redactor: scenario.redactor,
        gates: scenario.gates,
        index,
    };
    let leased = match placement {
        Placement::OwnServer => None,
        Placement::Seat(seat) => {
            Some(lease_seat(scenario.pool, whose, &program, &seat, model.started()).await?)
        }
        Placement::SharedDirectory => {
            let root = create_root(scenario.name, scenario.redactor, index, Some(scenario.pool))?;
            // A shared server reads the empty models catalog: only configs blind to it share.
            debug_assert_eq!(ModelsCatalog::for_config(&config), ModelsCatalog::Empty);
            Some(lease_shared(scenario.pool, whose, root, &program, &config).await?)
        }
    };
    if let Some(agent) = leased {
        return on_shared_server(
            agent,
            scenario.wire,
            scenario.progress,
            scenario.agents,
            &shared_line,
        )
        .await;
    }
    let root = create_root(scenario.name, scenario.redactor, index, None)?;
    if kind == AgentKind::Fixture {
        if let Err(e) = scenario.fixture.attach_home(&root.home) {
            let _ = std::fs::remove_dir_all(&root.root);
            return Err(ProvisionError::io("prepare the fixture agent's home", e));
        }
    }
    for package in &packages {
        if let Err(e) = package.seed(&root.xdg_cache) {
            let _ = std::fs::remove_dir_all(&root.root);
            let what = format!("seed OpenCode's cache with {}", package.spec());
            return Err(ProvisionError::io(&what, e));
        }
    }
    env.extend(root.hermetic_env(&config.to_string(), ModelsCatalog::for_config(&config)));
    let (policy, tcp_open) = sandbox_plan::own_server(&root.root, &program, &config, &options);
    (scenario.progress)(&sandbox.line(tcp_open.as_deref()));
    env.extend(options.env);

    let mut process = ServerProcess::new(
        root,
        Launch { program, env },
        options.ready_ceiling,
        scenario.redactor.clone(),
        scenario.gates.clone(),
    )
    .with_stop_grace(options.stop_grace);
    if sandbox.is_on() {
        process = process.confined(policy);
    }
    let agent = Agent::own(index, process);
    // Tracked before the start: a failed start keeps its root and logs for the diagnosis.
    scenario.agents.push(agent.clone());
    agent
        .start_forwarder(scenario.wire)
        .map_err(|e| ProvisionError::io("start the agent's forwarder", e))?;
    agent.start().await?;
    Ok(agent)
}

/// Where an agent goes.
enum Placement {
    /// A server of its own, in a root of its own.
    OwnServer,
    /// A directory of its own on a shared server.
    SharedDirectory,
    /// A seat on a shared server: a workspace of the pool's, warm when an earlier scenario with
    /// the same config booted it.
    Seat(pool::SeatConfig),
}

impl Placement {
    /// A shared agent takes a seat when its config has one; a warm workspace's root is the
    /// pool's, so under LIVE_KEEP every scenario keeps a root of its own to inspect, and a
    /// scenario may ask for a directory that boots for it.
    fn choose(share: bool, config: &serde_json::Value, options: &AgentOptions) -> Self {
        if !share {
            return Placement::OwnServer;
        }
        match pool::seat_config(config) {
            Some(seat) if !crate::settings::keep_roots() && !options.fresh_workspace => {
                Placement::Seat(seat)
            }
            _ => Placement::SharedDirectory,
        }
    }
}

/// Whose agent is placed: the scenario's name, redactor and gates, and the agent's number in it.
#[derive(Clone, Copy)]
struct Whose<'a> {
    name: &'a str,
    redactor: &'a Arc<Redactor>,
    gates: &'a Arc<Gates>,
    index: usize,
}

/// Creates the scenario's root for its agent `index` (in `shared`'s directory when the agent is
/// a directory on a shared server) and registers its paths on the redactor.
pub(crate) fn create_root(
    name: &str,
    redactor: &Redactor,
    index: usize,
    shared: Option<&SharedPool>,
) -> Result<AgentRoot, ProvisionError> {
    let root = match shared {
        Some(pool) => pool.dir().and_then(|dir| AgentRoot::create_in(&dir, name)),
        None => AgentRoot::create(name),
    }
    .map_err(|e| ProvisionError::io("create the scenario root", e))?;
    register_root(&root, redactor, index);
    Ok(root)
}

/// The root's paths on the redactor, and on the scenario's timeline.
fn register_root(root: &AgentRoot, redactor: &Redactor, index: usize) {
    root.register(redactor, index);
    crate::timeline::note(crate::timeline::Lane::Provisioning, "root", || {
        root.root.display().to_string()
    });
}

/// The last steps of a shared agent's provisioning: its forwarder, its observer, the progress.
async fn on_shared_server(
    agent: Agent,
    wire: &Arc<crate::forward::Wire>,
    progress: &(dyn Fn(&str) + Sync),
    agents: &mut AgentSlot,
    sandbox_line: &str,
) -> Result<Agent, ProvisionError> {
    agent
        .start_forwarder(wire)
        .map_err(|e| ProvisionError::io("start the agent's forwarder", e))?;
    // A server of its own is observed from its start on (`Agent::start`).
    agent.observe().await;
    progress(if agent.in_warm_workspace() {
        "on a shared server (warm workspace)"
    } else {
        "on a shared server"
    });
    crate::timeline::note(crate::timeline::Lane::Provisioning, "shared server", || {
        agent.endpoint()
    });
    progress(sandbox_line);
    agents.push(agent.clone());
    Ok(agent)
}

/// The agent as a seat (a workspace of the pool's, warm when an earlier scenario with the same
/// config booted it) on a shared server: the seat's config names its relay, which forwards to
/// the scenario's model while the lease lasts.
async fn lease_seat(
    pool: &SharedPool,
    whose: Whose<'_>,
    program: &Path,
    seat: &pool::SeatConfig,
    model: Option<&crate::model::ScriptedModel>,
) -> Result<Agent, ProvisionError> {
    let lease = super::pool::lease_seat(pool, program, whose.name, seat).await?;
    let Some((root, relay_port, _warm)) = lease.seat() else {
        unreachable!("a lease asked with a seat has one");
    };
    register_root(&root, whose.redactor, whose.index);
    // The relay's port reads as the model's did.
    whose.redactor.add_port(relay_port);
    if let Some(model) = model {
        model.reached_at(relay_port);
    }
    Ok(leased_agent(whose, root, lease))
}

/// The scenario's agent on its lease; what the server reports about itself reads as a server of
/// the scenario's own would.
fn leased_agent(whose: Whose<'_>, root: AgentRoot, lease: PoolLease) -> Agent {
    let (home, server_root) = lease.home_and_root();
    let redactor = whose.redactor;
    redactor.add_port(lease.port());
    redactor.add_path(home, "[home]");
    redactor.add_path(server_root, "[root]");
    Agent::leased(
        whose.index,
        root,
        lease,
        redactor.clone(),
        whose.gates.clone(),
    )
}

/// The agent as `scenario`'s directory on a shared server: its config goes into the
/// workspace's `.opencode/opencode.jsonc`, the last config file OpenCode reads for a directory
/// (the shared server's own config is empty, so it decides above the product's project files,
/// as `OPENCODE_CONFIG_CONTENT` does on a server of its own).
async fn lease_shared(
    pool: &SharedPool,
    whose: Whose<'_>,
    root: AgentRoot,
    program: &Path,
    config: &serde_json::Value,
) -> Result<Agent, ProvisionError> {
    let lease = match super::pool::lease(pool, program, whose.name, &root).await {
        Ok(lease) => lease,
        Err(e) => {
            // Nothing ran in it: the shared server's root keeps the evidence of a failed start.
            let _ = std::fs::remove_dir_all(&root.root);
            return Err(e);
        }
    };
    // Its shell lives in the server's root, known once leased.
    let server_root = lease.server_root();
    let written = super::pool::confine_config(server_root, program, &root, config.clone())
        .and_then(|config| super::project::write_project_config(&root.workspace, &config));
    if let Err(e) = written {
        lease.release(false, &root.workspace, false).await;
        let _ = std::fs::remove_dir_all(&root.root);
        return Err(ProvisionError::io("write the scenario's project config", e));
    }
    Ok(leased_agent(whose, root, lease))
}
