//! What a scenario can choose about the agent it provisions.

use std::path::PathBuf;
use std::time::Duration;

/// [`AgentOptions::ready_ceiling`]'s default.
pub(crate) const DEFAULT_READY_CEILING: Duration = Duration::from_secs(60);
/// [`AgentOptions::stop_grace`]'s default: OpenCode exits in about 0.1 s.
pub(crate) const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(5);

/// Options of [`Live::opencode_with`](crate::Live::opencode_with).
///
/// ```ignore
/// let agent = live
///     .opencode_with(AgentOptions::default().permission(json!({"*": "allow", "bash": "ask"})))
///     .await?;
/// ```
#[derive(Clone, Debug)]
pub struct AgentOptions {
    /// OpenCode's `permission` config, used in the config built for the scripted model.
    ///
    /// Default: `{"*": "allow", "external_directory": "deny"}`: every tool runs inside the
    /// workspace without a prompt (no scenario hangs on a permission it did not ask for), and
    /// nothing outside the workspace may be touched. Ask for prompts explicitly, e.g.
    /// `{"*": "allow", "bash": "ask"}`. Ignored when the config comes from `config` or from
    /// `OPENCODE_CONFIG_CONTENT` (a scenario that `requires` it).
    ///
    /// The policy reaches OpenCode above the project's config, so it outranks the `permission`
    /// of an `opencode.json` the product puts in the workspace (OpenCode applies the last
    /// matching rule, and the policy's `"*"` matches everything): to let the project's rules
    /// decide, as they would outside a test, set it to `{}` (OpenCode's own defaults then apply
    /// beneath them), or give the product's rules with
    /// [`product_config`](Self::product_config).
    pub(crate) permission: serde_json::Value,
    /// The whole `OPENCODE_CONFIG_CONTENT`, replacing the one built for the scenario. While a
    /// cassette is recorded, it is the real model's config the relay records from (its `model`
    /// names the provider), in place of the user's: OpenCode gets it pointed at the relay.
    pub(crate) config: Option<serde_json::Value>,
    /// The product's own OpenCode settings (agents, commands, MCP servers, instructions, the
    /// `shell`, permissions, ...), merged over the config the harness builds for the scenario's
    /// model as OpenCode merges one config source over another: objects key by key, anything
    /// else replaced, `instructions` and `plugin` lists joined. See
    /// [`product_config`](Self::product_config).
    pub(crate) product_config: Option<serde_json::Value>,
    /// Extra environment for the agent process, applied last.
    pub(crate) env: Vec<(String, String)>,
    /// The readiness ceiling before `LIVE_TIMEOUT_SCALE` (default 60 s).
    pub(crate) ready_ceiling: Duration,
    /// How long a stop waits after SIGTERM before it sends SIGKILL, before `LIVE_TIMEOUT_SCALE`
    /// (default 5 s; OpenCode exits in about 0.1 s).
    pub(crate) stop_grace: Duration,
    /// Paths the sandboxed agent and its tools may read, list and execute beneath, besides
    /// the system's directories, its program and its root (see the README's *Sandbox*).
    pub(crate) read_only: Vec<PathBuf>,
    /// Paths the sandboxed agent and its tools may also write beneath (create, change, remove),
    /// besides its root.
    pub(crate) writable: Vec<PathBuf>,
    /// On a shared server, a directory whose OpenCode instance boots for this scenario, never a
    /// warm workspace another scenario used (see [`fresh_workspace`](Self::fresh_workspace)).
    pub(crate) fresh_workspace: bool,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            permission: serde_json::json!({"*": "allow", "external_directory": "deny"}),
            config: None,
            product_config: None,
            env: Vec::new(),
            ready_ceiling: DEFAULT_READY_CEILING,
            stop_grace: DEFAULT_STOP_GRACE,
            read_only: Vec::new(),
            writable: Vec::new(),
            fresh_workspace: false,
        }
    }
}

impl AgentOptions {
    /// OpenCode's `permission` config these options give (see
    /// [`permission`](Self::permission)): for a config built outside provisioning, such as the
    /// scripted model's `ModelSlot::opencode_config`.
    pub fn permission_config(&self) -> &serde_json::Value {
        &self.permission
    }

    /// Sets [`permission`](Self::permission).
    pub fn permission(mut self, permission: serde_json::Value) -> Self {
        self.permission = permission;
        self
    }

    /// Sets [`config`](Self::config).
    pub fn config(mut self, config: serde_json::Value) -> Self {
        self.config = Some(config);
        self
    }

    /// Layers the product's own OpenCode settings over the harness's config for the scenario's
    /// model; called again, the later settings merge over the earlier ones.
    ///
    /// The settings reach OpenCode above every project config (`opencode.json` and
    /// `.opencode/` in the workspace, which OpenCode still reads and merges beneath), as they
    /// would from the product's own `OPENCODE_CONFIG_CONTENT`. Their `permission` rules merge
    /// over [`permission`](Self::permission)'s. The model wiring stays the harness's:
    /// provisioning fails with [`ProvisionError::ProductConfig`](super::ProvisionError::ProductConfig),
    /// naming the key, for settings of the harness's `provider.<id>`, `model` or `small_model`,
    /// an `enabled_providers` without (or `disabled_providers` with) the provider of the
    /// scenario's model, and an agent's, mode's or command's `model` of another provider.
    /// `autoupdate` and `share` may be set, but stay off: the agent's environment turns both
    /// off.
    ///
    /// On a shared server (`LIVE_ISOLATION=shared`) the settings go to the workspace's
    /// `.opencode/opencode.jsonc` with the harness's config; settings that reach beyond the
    /// workspace's directory give the scenario a server of its own: `plugin`, providers of
    /// OpenCode's models catalog in `enabled_providers`, and credentials (provider `options`
    /// and `headers`, MCP `headers`, `environment` and `oauth`), which stay out of files.
    ///
    /// ```ignore
    /// let agent = live
    ///     .opencode_with(AgentOptions::default().product_config(json!({
    ///         "instructions": ["RULES.md"],
    ///         "permission": {"bash": "ask"},
    ///     })))
    ///     .await?;
    /// ```
    pub fn product_config(mut self, settings: serde_json::Value) -> Self {
        self.product_config = Some(match self.product_config.take() {
            Some(mut earlier) if earlier.is_object() && settings.is_object() => {
                super::config_layer::merge_settings(&mut earlier, &settings);
                earlier
            }
            _ => settings,
        });
        self
    }

    /// Adds one variable to [`env`](Self::env).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    /// Sets [`ready_ceiling`](Self::ready_ceiling).
    pub fn ready_ceiling(mut self, ceiling: Duration) -> Self {
        self.ready_ceiling = ceiling;
        self
    }

    /// Sets [`stop_grace`](Self::stop_grace).
    pub fn stop_grace(mut self, grace: Duration) -> Self {
        self.stop_grace = grace;
        self
    }

    /// Adds a path to [`read_only`](Self::read_only): the agent's sandbox lets it and its tools
    /// read beneath `path` (a directory) or read `path` (a file). A path that does not exist
    /// when the agent starts grants nothing.
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(path.into());
        self
    }

    /// Adds a path to [`writable`](Self::writable): the agent's sandbox lets it and its tools
    /// read and write beneath `path`. A path that does not exist when the agent starts grants
    /// nothing.
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable.push(path.into());
        self
    }

    /// Sets [`fresh_workspace`](Self::fresh_workspace): on a shared server the scenario gets a
    /// new directory, whose instance boots on its first request, instead of a warm workspace
    /// (one a passing scenario with the same config used, reset, its instance still booted).
    /// What a warm workspace cannot hide: the events OpenCode sends while an instance boots
    /// (`plugin.added`, `catalog.updated`, `reference.updated`, `integration.updated` in the
    /// first turn's stream), the project's id and creation time, and project config files a
    /// product writes after provisioning (read at boot). A scenario that asserts on those asks
    /// for a fresh workspace; it costs OpenCode's start-up of a directory (about 1–2 s of CPU).
    pub fn fresh_workspace(mut self) -> Self {
        self.fresh_workspace = true;
        self
    }
}
