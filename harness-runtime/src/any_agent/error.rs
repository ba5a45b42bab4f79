//! What can go wrong driving an agent of any kind: the error of the surface underneath.

use crate::acp::AcpError;
use crate::client::ClientError;
use crate::opencode::ProvisionError;

/// A failure to start or drive an [`AnyAgent`](super::AnyAgent). Redacted like the errors it
/// wraps.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnyAgentError {
    /// Starting OpenCode's server failed.
    #[error(transparent)]
    Provision(#[from] ProvisionError),
    /// OpenCode's HTTP API failed.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The ACP agent failed.
    #[error(transparent)]
    Acp(#[from] AcpError),
    /// A cancel found no reply of the session's turn in flight within its ceiling.
    #[error(
        "cancel found no reply in flight for {agent} within {ceiling:?}: cancel while a turn's \
         model reply is running (e.g. after a stalled reply was reached)"
    )]
    NothingToCancel {
        /// The agent kind.
        agent: &'static str,
        /// How long it waited.
        ceiling: std::time::Duration,
    },
}
