//! What `opencode acp` needs to start as a scenario's ACP agent: the pinned binary, a root of its
//! own, the scenario's model in its config, the hermetic environment and its sandbox. The ACP
//! layer spawns it and speaks to it over stdio; this file only prepares, as `provision` does for
//! `opencode serve`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::root::AgentRoot;
use super::{
    AgentOptions, ModelsCatalog, ProvisionError, config, discover, port, provider_package,
};
use crate::model::ModelSlot;
use crate::redact::Redactor;
use crate::sandbox::Policy;
use crate::scenario::ScenarioOptions;

/// What an ACP agent's preparation uses of its scenario.
pub(crate) struct AcpContext<'a> {
    /// `<topic>::<fn>`: the root is named after it.
    pub(crate) name: &'a str,
    pub(crate) options: &'a ScenarioOptions,
    /// Where `node_modules/.bin/opencode` is looked for.
    pub(crate) manifest_dir: &'a Path,
    pub(crate) model: &'a mut ModelSlot,
    pub(crate) redactor: &'a Arc<Redactor>,
    /// The agent's 1-based position among the scenario's agents (its root's placeholder).
    pub(crate) index: usize,
    /// What the scenario asked of the agent: the product's config layer (permissions, agents),
    /// extra environment, paths it may read or write.
    pub(crate) agent: AgentOptions,
}

/// A prepared start of an agent spoken to over stdio.
#[derive(Debug)]
pub(crate) struct StdioLaunch {
    pub(crate) root: AgentRoot,
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<String>,
    /// Set after the inherited environment was cleaned, in order.
    pub(crate) env: Vec<(String, String)>,
    /// Inherited variables removed besides those no agent gets.
    pub(crate) unset: Vec<String>,
    /// The sandbox it runs in; `None` when the sandbox is off.
    pub(crate) policy: Option<Policy>,
    /// The progress line that says how it is confined.
    pub(crate) sandbox_line: String,
}

/// Prepares `opencode acp` for the scenario: a root of its own with OpenCode's hermetic
/// environment, the config `opencode serve` would get (the scripted model, or the scenario's
/// real model), and a port of its own: `opencode acp` serves OpenCode's HTTP API to itself on
/// it, so its sandbox may connect there and nowhere else beyond its model.
pub(crate) fn prepare_opencode_acp(cx: AcpContext<'_>) -> Result<StdioLaunch, ProvisionError> {
    let program = discover::find_opencode(cx.manifest_dir)?;
    let options = cx.agent;
    let config = config::choose(&options, cx.options, cx.name, cx.model, cx.redactor)?;
    config::register_secrets(&config, cx.redactor);
    let packages = provider_package::to_seed(
        &config,
        crate::sandbox::program_node_modules(&program).as_deref(),
    );
    // Before anything is created: under CI or LIVE_STRICT=1 an unavailable sandbox fails here.
    let sandbox = crate::sandbox::current().map_err(ProvisionError::Sandbox)?;
    let root = super::provision::create_root(cx.name, cx.redactor, cx.index, None)?;
    let cleanup = |e: ProvisionError| {
        let _ = std::fs::remove_dir_all(&root.root);
        e
    };
    for package in &packages {
        package.seed(&root.xdg_cache).map_err(|e| {
            let what = format!("seed OpenCode's cache with {}", package.spec());
            cleanup(ProvisionError::io(&what, e))
        })?;
    }
    let port = port::pick(0).map_err(|e| cleanup(ProvisionError::io("reserve a port", e)))?;
    cx.redactor.add_port(port);
    let mut env = root.hermetic_env(&config.to_string(), ModelsCatalog::for_config(&config));
    for (name, value) in &options.env {
        cx.redactor.add_env(name, value);
    }
    let (mut policy, tcp_open) =
        super::sandbox_plan::own_server(&root.root, &program, &config, &options);
    policy.allow_connect(port);
    env.extend(options.env.iter().cloned());
    let args = [
        "acp",
        "--hostname",
        "127.0.0.1",
        "--port",
        &port.to_string(),
    ]
    .map(str::to_string)
    .to_vec();
    Ok(StdioLaunch {
        sandbox_line: sandbox.line(tcp_open.as_deref()),
        policy: sandbox.is_on().then_some(policy),
        root,
        program,
        args,
        env,
        unset: Vec::new(),
    })
}
