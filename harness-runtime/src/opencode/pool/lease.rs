//! A scenario's lease of a shared server, from this process's pool (`servers`) or from the
//! run's pool owner under nextest (`remote`): what the agent needs of it either way.

use std::path::{Path, PathBuf};

use super::remote::{self, RemoteLease};
use super::servers::{Lease, SharedPool};
use super::terms::{LeaseRequest, SeatRequest};
use super::warm::SeatConfig;
use crate::opencode::ProvisionError;
use crate::opencode::root::AgentRoot;

/// A lease of a shared server, wherever its pool runs.
#[derive(Debug)]
pub(crate) enum PoolLease {
    /// This process's pool.
    Local(Box<Lease>),
    /// The run's pool, in its owner process.
    Remote(Box<RemoteLease>),
}

impl From<Lease> for PoolLease {
    fn from(lease: Lease) -> Self {
        PoolLease::Local(Box::new(lease))
    }
}

/// Leases a shared server of `program` for `scenario`, whose root is `root` (in the pool's
/// directory): from the run's pool under nextest, else from `pool`, this process's.
pub(crate) async fn lease(
    pool: &SharedPool,
    program: &Path,
    scenario: &str,
    root: &AgentRoot,
) -> Result<PoolLease, ProvisionError> {
    let scenario_root = Some((root.root.clone(), root.workspace.clone()));
    lease_from(pool, program, scenario, scenario_root, None).await
}

/// Leases a shared server of `program` with a seat (a warm workspace) of `seat`'s config.
pub(crate) async fn lease_seat(
    pool: &SharedPool,
    program: &Path,
    scenario: &str,
    seat: &SeatConfig,
) -> Result<PoolLease, ProvisionError> {
    lease_from(pool, program, scenario, None, Some(seat)).await
}

async fn lease_from(
    pool: &SharedPool,
    program: &Path,
    scenario: &str,
    scenario_root: Option<(PathBuf, PathBuf)>,
    seat: Option<&SeatConfig>,
) -> Result<PoolLease, ProvisionError> {
    match super::run::run_dir().filter(|_| super::run::leases_from_owner()) {
        Some(dir) => {
            let request = LeaseRequest {
                program: program.to_path_buf(),
                scenario: scenario.to_string(),
                seat: seat.map(|s| SeatRequest {
                    key: s.key.clone(),
                    model_port: s.model_port,
                }),
            };
            remote::lease(
                dir,
                request,
                scenario_root,
                seat.cloned(),
                pool.take_ahead(),
            )
            .await
            .map(|lease| PoolLease::Remote(Box::new(lease)))
        }
        None => pool
            .lease(program, scenario, seat)
            .await
            .map(PoolLease::from),
    }
}

impl PoolLease {
    pub(crate) fn port(&self) -> u16 {
        match self {
            PoolLease::Local(lease) => lease.server().process().port(),
            PoolLease::Remote(lease) => lease.port(),
        }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        match self {
            PoolLease::Local(lease) => lease.server().process().pid(),
            PoolLease::Remote(lease) => lease.pid(),
        }
    }

    pub(crate) fn is_running(&self) -> bool {
        match self {
            PoolLease::Local(lease) => lease.server().process().is_running(),
            PoolLease::Remote(lease) => lease.is_running(),
        }
    }

    pub(crate) fn unredacted_log_tail(&self, n: usize) -> String {
        match self {
            PoolLease::Local(lease) => lease.server().process().unredacted_log_tail(n),
            PoolLease::Remote(lease) => lease.unredacted_log_tail(n),
        }
    }

    #[cfg(any(test, feature = "testing"))]
    pub(crate) fn owner_token(&self) -> &str {
        match self {
            PoolLease::Local(lease) => lease.server().process().owner_token(),
            PoolLease::Remote(lease) => &lease.facts().owner_token,
        }
    }

    /// The server's home (its `HOME`) and root: the scenario's redactor names them.
    pub(crate) fn home_and_root(&self) -> (&Path, &Path) {
        match self {
            PoolLease::Local(lease) => {
                (lease.server().home(), &lease.server().process().root().root)
            }
            PoolLease::Remote(lease) => (&lease.facts().home, &lease.facts().root),
        }
    }

    /// Waits for the server to exit on its own: only a server of this process's pool can be
    /// waited for; another process's is refused.
    pub(crate) async fn wait_exit(
        &self,
        ceiling: std::time::Duration,
        redactor: &crate::redact::Redactor,
    ) -> Result<std::process::ExitStatus, ProvisionError> {
        match self {
            PoolLease::Local(lease) => lease.server().process().wait_exit(ceiling, redactor).await,
            PoolLease::Remote(_) => Err(ProvisionError::SharedServer {
                operation: "wait_exit",
            }),
        }
    }

    /// Ends the lease (see `Lease::release`); the run's pool owner does the same with it.
    pub(crate) async fn release(&self, passed: bool, workspace: &Path, approved_always: bool) {
        match self {
            PoolLease::Local(lease) => lease.release(passed, workspace, approved_always).await,
            PoolLease::Remote(lease) => lease.release(passed, approved_always).await,
        }
    }

    /// The leased seat (a warm workspace): its root, its relay's port, whether it is warm.
    pub(crate) fn seat(&self) -> Option<(AgentRoot, u16, bool)> {
        match self {
            PoolLease::Local(lease) => lease.seat(),
            PoolLease::Remote(lease) => lease.seat(),
        }
    }

    /// Whether the released seat went back to the pool (see `Lease::seat_kept`).
    pub(crate) fn seat_kept(&self) -> bool {
        match self {
            PoolLease::Local(lease) => lease.seat_kept(),
            PoolLease::Remote(lease) => lease.seat_kept(),
        }
    }

    /// The server's root (its logs, its database, what the pool keeps of it).
    pub(crate) fn server_root(&self) -> &Path {
        self.home_and_root().1
    }

    pub(crate) fn abandon(&self) {
        match self {
            PoolLease::Local(lease) => lease.abandon(),
            PoolLease::Remote(lease) => lease.abandon(),
        }
    }
}
