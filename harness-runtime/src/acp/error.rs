//! What can go wrong with an ACP agent. Every message is redacted when it is built.

use std::time::Duration;

use crate::opencode::ProvisionError;

/// A failure to start, speak to, or stop an ACP agent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AcpError {
    /// Preparing the agent (its program, root, config, sandbox) failed.
    #[error(transparent)]
    Provision(#[from] ProvisionError),
    /// The agent's program is not installed: a missing prerequisite (the scenario is skipped,
    /// or failed under `CI`/`LIVE_STRICT=1`).
    #[error("{program} not found: run `{install}`")]
    AgentNotFound {
        /// The executable looked for.
        program: &'static str,
        /// What installs it.
        install: &'static str,
    },
    /// The agent cannot be run the way the scenario asks (e.g. with a model it cannot reach).
    #[error("{agent} cannot run this scenario: {what}")]
    Unsupported {
        /// The agent kind.
        agent: &'static str,
        /// Why, and what to do.
        what: String,
    },
    /// The agent's program could not be started.
    #[error("could not start the ACP agent ({command}): {message}")]
    Spawn {
        /// The command line, paths redacted.
        command: String,
        /// Why.
        message: String,
    },
    /// The agent answered a request with an error, or its answer did not parse.
    #[error(
        "the ACP agent failed `{method}`: {message}; request: {payload}\nlast stderr lines:\n{stderr_tail}"
    )]
    Protocol {
        /// The JSON-RPC method, e.g. `session/prompt`.
        method: String,
        /// The error the agent (or the protocol layer) gave.
        message: String,
        /// The request's parameters, redacted.
        payload: String,
        /// The agent's last stderr lines, redacted.
        stderr_tail: String,
    },
    /// The agent did not answer within the ceiling.
    #[error(
        "the ACP agent did not answer `{method}` within {waited:?}: {pending}; raise the \
         scenario's timeout if the turn is slow, else it is stuck\nlast stderr lines:\n{stderr_tail}"
    )]
    NoAnswer {
        /// The method waited for.
        method: String,
        /// How long.
        waited: Duration,
        /// What the agent was still doing (its last update, a pending permission request).
        pending: String,
        /// The agent's last stderr lines, redacted.
        stderr_tail: String,
    },
    /// The agent exited, or closed its stdout, while a request was pending.
    #[error(
        "the ACP agent exited ({status}) while `{method}` was pending\nlast stderr lines:\n{stderr_tail}"
    )]
    Exited {
        /// The method that was pending.
        method: String,
        /// Its exit status, or that only its output closed.
        status: String,
        /// The agent's last stderr lines, redacted.
        stderr_tail: String,
    },
    /// A fault that names no ACP method.
    #[error("bad ACP fault: {0}")]
    Fault(String),
    /// The agent could not be stopped.
    #[error("could not stop the ACP agent: {0}")]
    Stop(String),
}
