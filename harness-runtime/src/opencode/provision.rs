//! `live.opencode()`: choose the backend and config, create the root, spawn, wait until ready.

use super::root::AgentRoot;
use super::server_process::{Launch, ServerProcess};
use super::{Agent, AgentOptions, ProvisionError, config, discover, share_policy, shared_pool};
use crate::Isolation;
use crate::scenario::AgentKind;

impl crate::Live {
    /// Provisions an agent with the default [`AgentOptions`]: a real `opencode serve` (or the
    /// fixture agent, per the scenario's `agent` option) in its own isolated root, pointed at the
    /// scripted model (or at `OPENCODE_CONFIG_CONTENT` when the scenario requires it), and
    /// waits until it answers.
    pub async fn opencode(&mut self) -> Result<Agent, ProvisionError> {
        self.opencode_with(AgentOptions::default()).await
    }

    /// [`opencode`](Self::opencode) with explicit options.
    pub async fn opencode_with(&mut self, options: AgentOptions) -> Result<Agent, ProvisionError> {
        let kind = self.info.options.agent;
        let (program, mut env) = match kind {
            AgentKind::OpenCode => match discover::find_opencode(&self.info.manifest_dir) {
                Ok(program) => (program, Vec::new()),
                Err(e) => {
                    // Nothing installed is not this scenario's fault: report it skipped (failed
                    // under LIVE_STRICT). A wrong LIVE_OPENCODE_BIN is a mistake: it fails.
                    if matches!(e, ProvisionError::OpenCodeNotFound) {
                        self.skip_for_requirement(e.to_string());
                    }
                    return Err(e);
                }
            },
            AgentKind::Fixture => {
                let spec = crate::fixture::launch_spec()
                    .map_err(|e| ProvisionError::io("locate the fixture agent", e))?;
                (spec.program, spec.env)
            }
        };
        let model = &mut self.model;
        let config = config::choose(&options, self.info.options.requires, |permission| {
            model.opencode_config(permission)
        })?;
        config::register_secrets(&config, &self.redactor);
        for (name, value) in &options.env {
            self.redactor.add_env(name, value);
        }

        let share = share_policy::level(&self.info.options) == Isolation::Shared
            && match share_policy::check(&self.info.options, &options, self.agents.len()) {
                Ok(()) => true,
                Err(reason) => {
                    self.progress(format!("a server of its own: {reason}"));
                    false
                }
            };

        let root = AgentRoot::create(&self.info.name)
            .map_err(|e| ProvisionError::io("create the scenario root", e))?;
        let index = self.agents.len() + 1;
        root.register(&self.redactor, index);
        if share {
            return self.lease_shared(root, index, &program, &config).await;
        }
        if kind == AgentKind::Fixture {
            if let Err(e) = self.fixture.attach_home(&root.home) {
                let _ = std::fs::remove_dir_all(&root.root);
                return Err(ProvisionError::io("prepare the fixture agent's home", e));
            }
        }
        env.extend(root.hermetic_env(&config.to_string()));
        env.extend(options.env);

        let process = ServerProcess::new(
            root,
            Launch { program, env },
            options.ready_timeout,
            self.redactor.clone(),
            self.gates.clone(),
        );
        let agent = Agent::own(index, process);
        // Tracked before the start: a failed start keeps its root and logs for the diagnosis.
        self.agents.push(agent.clone());
        agent.start().await?;
        Ok(agent)
    }
}

impl crate::Live {
    /// The agent as a directory on a shared server: the scenario's provider and permission go
    /// into `opencode.json` at its root, which OpenCode finds walking up from the workspace
    /// (the shared server's own config carries neither, so the project config decides).
    async fn lease_shared(
        &mut self,
        root: AgentRoot,
        index: usize,
        program: &std::path::Path,
        config: &serde_json::Value,
    ) -> Result<Agent, ProvisionError> {
        let leased = async {
            std::fs::write(root.root.join("opencode.json"), config.to_string())
                .map_err(|e| ProvisionError::io("write the scenario's project config", e))?;
            shared_pool::lease(program).await
        }
        .await;
        let lease = match leased {
            Ok(lease) => lease,
            Err(e) => {
                // Nothing ran in it: the shared server's root keeps the evidence of a failed start.
                let _ = std::fs::remove_dir_all(&root.root);
                return Err(e);
            }
        };
        let server = lease.server();
        self.redactor.add_port(server.process().port());
        // What the server reports about itself reads as a server of the scenario's own would.
        self.redactor.add_path(server.home(), "[home]");
        self.redactor
            .add_path(&server.process().root().root, "[root]");
        self.progress("on a shared server");
        let agent = Agent::leased(
            index,
            root,
            lease,
            self.redactor.clone(),
            self.gates.clone(),
        );
        self.agents.push(agent.clone());
        Ok(agent)
    }
}
