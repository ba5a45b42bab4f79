//! The ACP agents of one scenario, and what happens to them and their roots when it ends.

use std::path::Path;

use super::{AcpAgent, AcpRelay};
use crate::redact::Redactor;

/// The ACP agents a scenario started: driven by the harness, or by a product through a relay.
#[derive(Debug, Default)]
pub(crate) struct AcpSlot {
    agents: Vec<Held>,
}

#[derive(Debug)]
enum Held {
    Agent(AcpAgent),
    Relay(AcpRelay),
}

impl Held {
    async fn stop(&self) -> Result<(), super::AcpError> {
        match self {
            Held::Agent(agent) => agent.stop().await,
            Held::Relay(relay) => relay.stop().await,
        }
    }

    fn root(&self) -> &Path {
        match self {
            Held::Agent(agent) => agent.root(),
            Held::Relay(relay) => relay.root(),
        }
    }

    fn stderr_tail(&self, n: usize) -> String {
        match self {
            Held::Agent(agent) => agent.stderr_tail(n),
            Held::Relay(relay) => relay.stderr_tail(n),
        }
    }

    fn kill_blocking(&self) {
        match self {
            Held::Agent(agent) => agent.kill_blocking(),
            Held::Relay(relay) => relay.kill_blocking(),
        }
    }
}

impl AcpSlot {
    pub(crate) fn len(&self) -> usize {
        self.agents.len()
    }

    pub(crate) fn push(&mut self, agent: AcpAgent) {
        self.agents.push(Held::Agent(agent));
    }

    pub(crate) fn push_relay(&mut self, relay: AcpRelay) {
        self.agents.push(Held::Relay(relay));
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
fn print_kept(agent: &Held) {
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
