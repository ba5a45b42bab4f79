//! Shared servers (`LIVE_ISOLATION=shared`): which scenarios may share (`policy`), the pool of
//! servers each leased by a few scenarios at once (`servers`), its warm workspaces (`warm`), a
//! scenario's confinement on a shared server (`shell`, `guard`), and, under nextest, the pool
//! one process of the run owns and the others lease from over a socket (`run`, `owner`,
//! `remote`, `wire`). `lease` is what a scenario holds, whichever process owns the pool;
//! `terms` is what is asked and granted.

mod guard;
mod lease;
mod owner;
mod policy;
mod remote;
mod run;
mod servers;
mod shell;
mod terms;
mod warm;
mod wire;

pub(crate) use lease::{PoolLease, lease, lease_seat};
pub(crate) use owner::run_pool_owner;
pub(crate) use policy::{check, level, likely, plan_shares};
#[cfg(test)]
pub(crate) use servers::Lease;
pub(crate) use servers::SharedPool;
pub(crate) use shell::confine_config;
pub(crate) use warm::{SeatConfig, seat_config};
