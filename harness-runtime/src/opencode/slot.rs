//! The agents of one scenario, and what happens to them and their roots when it ends.

use super::Agent;
use crate::redact::Redactor;

/// The agents a scenario provisioned.
#[derive(Debug, Default)]
pub struct AgentSlot {
    agents: Vec<Agent>,
}

impl AgentSlot {
    /// How many agents the scenario provisioned so far.
    pub(crate) fn len(&self) -> usize {
        self.agents.len()
    }

    pub(crate) fn push(&mut self, agent: Agent) {
        self.agents.push(agent);
    }

    /// Every message each agent reported while the scenario ran (see
    /// [`Agent::messages_seen`]), agent after agent.
    pub(crate) async fn messages_seen(&self, settle: bool) -> Vec<crate::client::MessageInfo> {
        let mut all = Vec::new();
        for agent in &self.agents {
            all.extend(agent.messages_seen(settle).await);
        }
        all
    }

    /// Stops every agent of the scenario; removes roots when `passed` (and `LIVE_KEEP` is unset),
    /// otherwise keeps them and prints each path once.
    pub(crate) async fn finish(&mut self, passed: bool, redactor: &Redactor) -> Result<(), String> {
        let agents = std::mem::take(&mut self.agents);
        let mut errors = Vec::new();
        let mut stopped = Vec::new();
        for agent in &agents {
            agent.release_lease(passed).await;
            let result = agent.stop_ungated().await;
            if let Err(e) = &result {
                errors.push(e.to_string());
            }
            stopped.push(result.is_ok());
        }
        let keep_all = !passed || crate::settings::keep_roots();
        for (agent, stopped) in agents.iter().zip(stopped) {
            // A root whose server was not confirmed gone is kept: something may still write there.
            if agent.root_is_pools() && !keep_all {
                continue;
            }
            if keep_all || agent.retained() || !stopped {
                print_kept(agent);
            } else if let Err(e) = std::fs::remove_dir_all(agent.root()) {
                errors.push(format!(
                    "could not remove the scenario root {}: {e}",
                    agent.root().display()
                ));
                print_kept(agent);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(redactor.redact(&errors.join("\n")))
        }
    }
}

/// The one unredacted path the harness prints: the user's way to the evidence.
fn print_kept(agent: &Agent) {
    eprintln!("kept scenario root: {}", agent.root().display());
    crate::timeline::kept_root(agent.root(), || agent.log_tail(40));
}

impl Drop for AgentSlot {
    /// The fallback when `finish` did not run (a panic in the runtime, a killed runtime): kill
    /// synchronously, keep the roots (the outcome is unknown), say where they are.
    fn drop(&mut self) {
        for agent in self.agents.drain(..) {
            agent.kill_blocking();
            print_kept(&agent);
        }
    }
}
