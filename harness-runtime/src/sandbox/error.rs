//! What can go wrong while confining an agent.

/// A failure to confine, or to hand a launch to the launcher.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// The launcher was started without its launch, or with one it cannot read.
    #[error(
        "the sandbox launcher has no valid launch in {var}: {problem} (the harness sets it; \
         a binary that dispatches roles must not be started in the `sandbox` role by hand)"
    )]
    Launch {
        /// The variable that carries the launch.
        var: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// Landlock refused the ruleset, a rule, or the restriction.
    #[cfg(target_os = "linux")]
    #[error("landlock refused the sandbox: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The kernel enforced nothing of the ruleset.
    #[error(
        "landlock enforced nothing of the sandbox on this kernel: set LIVE_SANDBOX=0 to run \
         the agent unconfined"
    )]
    NotEnforced,
    /// This platform has no Landlock.
    #[cfg(not(target_os = "linux"))]
    #[error("Landlock is Linux-only: set LIVE_SANDBOX=0 to run the agent unconfined")]
    NotLinux,
}
