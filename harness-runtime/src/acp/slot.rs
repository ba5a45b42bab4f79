//! The ACP agents of one scenario, and what happens to them and their roots when it ends.

use super::AcpAgent;
use crate::redact::Redactor;

/// The ACP agents a scenario started.
#[derive(Debug, Default)]
pub(crate) struct AcpSlot {
    agents: Vec<AcpAgent>,
}

impl AcpSlot {
    pub(crate) fn len(&self) -> usize {
        self.agents.len()
    }

    pub(crate) fn push(&mut self, agent: AcpAgent) {
        self.agents.push(agent);
    }

    /// Stops every agent; removes roots when `passed` (and `LIVE_KEEP` is unset), otherwise
    /// keeps them and prints each path once.
    pub(crate) async fn finish(&mut self, passed: bool, redactor: &Redactor) -> Result<(), String> {
        let mut errors = Vec::new();
        for agent in std::mem::take(&mut self.agents) {
            let stopped = agent.stop().await;
            if let Err(e) = &stopped {
                errors.push(e.to_string());
            }
            if !passed || crate::settings::keep_roots() || stopped.is_err() {
                print_kept(&agent);
            } else if let Err(e) = std::fs::remove_dir_all(agent.root()) {
                errors.push(format!(
                    "could not remove the scenario root {}: {e}",
                    agent.root().display()
                ));
                print_kept(&agent);
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
fn print_kept(agent: &AcpAgent) {
    eprintln!("kept scenario root: {}", agent.root().display());
    crate::timeline::kept_root(agent.root(), || agent.stderr_tail(40));
}

impl Drop for AcpSlot {
    /// The fallback when `finish` did not run: kill synchronously, keep the roots.
    fn drop(&mut self) {
        for agent in self.agents.drain(..) {
            agent.kill_blocking();
            eprintln!("kept scenario root: {}", agent.root().display());
        }
    }
}
