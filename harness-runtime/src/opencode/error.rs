//! What can go wrong while provisioning an agent. Every message is redacted when it is built.

use std::time::Duration;

/// The exact message of [`ProvisionError::OpenCodeNotFound`]; the runner turns it into a skip.
#[cfg(any(test, feature = "testing"))]
pub const OPENCODE_NOT_FOUND: &str = "opencode not found: run `npm ci`";

/// A failure to provision, start, or stop an agent server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProvisionError {
    /// No `opencode` executable in `LIVE_OPENCODE_BIN`, `node_modules/.bin` or `PATH`.
    #[error("opencode not found: run `npm ci`")]
    OpenCodeNotFound,
    /// `LIVE_OPENCODE_BIN` is set but does not name an executable file.
    #[error(
        "LIVE_OPENCODE_BIN does not name an executable file: point it at the opencode executable or unset it"
    )]
    BadBinaryOverride,
    /// The agent's configuration could not be built.
    #[error("invalid agent configuration: {0}")]
    Config(String),
    /// A setting of [`AgentOptions::product_config`](super::AgentOptions::product_config)
    /// would take the scenario's model away from OpenCode (the harness's provider entry,
    /// `model`, `small_model`, the providers enabled or disabled, an agent's model).
    #[error("the product config cannot set `{key}`: {reason}")]
    ProductConfig {
        /// The setting, as a dotted path, e.g. `provider.scripted` or `agent.build.model`.
        key: String,
        /// Why it breaks the wiring, and what to do.
        reason: String,
    },
    /// A file-system step of provisioning failed.
    #[error("could not {what}: {source}")]
    Io {
        /// What was being done, e.g. "create the scenario root".
        what: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The process could not be started at all.
    #[error("could not start the agent ({command}): {message}")]
    Spawn {
        /// The command line, secrets and paths redacted.
        command: String,
        /// Why.
        message: String,
    },
    /// The process exited before it was ready.
    #[error(
        "the agent exited before it was ready ({status}); command: {command}\nlast log lines:\n{log_tail}"
    )]
    ExitedBeforeReady {
        /// Its exit status.
        status: String,
        /// The command line, secrets and paths redacted.
        command: String,
        /// The last lines of its output, redacted.
        log_tail: String,
    },
    /// Every start exited because its address was in use before it bound it.
    #[error(
        "the agent could not bind a port: {attempts} starts in a row exited because their address \
         was in use (another process binds ports on 127.0.0.1 as fast as they are chosen; find it \
         with `ss -ltnp`); command: {command}\nlast log lines:\n{log_tail}"
    )]
    PortLost {
        /// How many starts were tried, each on a new port.
        attempts: usize,
        /// The last command line, secrets and paths redacted.
        command: String,
        /// The last lines of its output with each attempt marked, redacted.
        log_tail: String,
    },
    /// The process did not become ready within its ceiling.
    #[error(
        "the agent was not ready after {waited:?}: still waiting for {pending}; command: {command}\nlast log lines:\n{log_tail}"
    )]
    NotReady {
        /// The readiness step that never completed.
        pending: String,
        /// How long it waited (after `LIVE_TIMEOUT_SCALE`).
        waited: Duration,
        /// The command line, secrets and paths redacted.
        command: String,
        /// The last lines of its output, redacted.
        log_tail: String,
    },
    /// The process could not be confirmed stopped and reaped.
    #[error("could not stop the agent: {message}\nlast log lines:\n{log_tail}")]
    Stop {
        /// What did not happen.
        message: String,
        /// The last lines of its output, redacted.
        log_tail: String,
    },
    /// The agent was expected to exit on its own ([`Agent::wait_exit`](super::Agent::wait_exit))
    /// and still ran when the ceiling passed.
    #[error(
        "the agent still runs after {waited:?}, though it was expected to exit on its own; \
         last log lines:\n{log_tail}"
    )]
    StillRunning {
        /// How long it waited (after `LIVE_TIMEOUT_SCALE`).
        waited: Duration,
        /// The last lines of its output, redacted.
        log_tail: String,
    },
    /// [`Agent::wait_exit`](super::Agent::wait_exit) was asked of an agent with no process:
    /// one stopped by the scenario, whose exit was its own doing.
    #[error(
        "there is no agent process to wait for: it was stopped; wait for its exit before `stop`, \
         or `start` it again"
    )]
    NoProcess,
    /// A scenario on a shared server (`LIVE_ISOLATION=shared`) asked for what only a server of
    /// its own allows.
    #[error(
        "`{operation}` needs a server of the scenario's own, but this agent is a directory on a \
         shared server (LIVE_ISOLATION=shared): mark the scenario \
         #[live_agent_test(isolation = \"server\")]"
    )]
    SharedServer {
        /// The refused operation, e.g. `stop`.
        operation: &'static str,
    },
    /// A `cassette` scenario's model could not be served as its plan says: the cassette could
    /// not be replayed (missing, corrupt, another format), or the relay that records it could
    /// not start.
    #[error("could not {what} the cassette: {message}; {advice}")]
    Cassette {
        /// `replay` or `record`.
        what: &'static str,
        /// What went wrong, redacted.
        message: String,
        /// What to do about it.
        advice: String,
    },
    /// The agent's sandbox is unavailable here (no Landlock) and `CI` or `LIVE_STRICT=1` makes
    /// that a failure; the message says why and how to run unconfined on purpose.
    #[error("{0}")]
    Sandbox(String),
    /// The reaper that kills agents when the runner dies could not be started or told.
    #[error("could not hand the agent to the reaper: {0}")]
    Reaper(String),
}

impl ProvisionError {
    pub(crate) fn io(what: &str, source: std::io::Error) -> Self {
        ProvisionError::Io {
            what: what.to_string(),
            source,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn not_found_has_the_exact_text_the_runner_matches() {
        assert_eq!(
            super::ProvisionError::OpenCodeNotFound.to_string(),
            super::OPENCODE_NOT_FOUND
        );
    }
}
