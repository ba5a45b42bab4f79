//! Owned child processes: own process group, die with the runner, terminate → kill → reap.
//!
//! Three layers, because OpenCode's tool commands leave its process group and session:
//! - [`OwnedChild`]: the server in its own process group; stop is SIGTERM → bounded wait →
//!   SIGKILL → reap, and `Drop` does the same synchronously.
//! - an owner token (`LIVE_HARNESS_OWNER=<token>`) in the environment of every spawned agent,
//!   inherited by all its descendants even when they detach; the sweep kills every process
//!   carrying it (Linux: `/proc/*/environ`).
//! - the reaper: a helper process per runner that learns every token and sweeps them all when the
//!   runner's pipe closes, which is also what happens when the runner is SIGKILLed.

mod child;
mod identity;
mod line_pump;
mod reaper;
mod role_command;
mod run_dir;
mod sweep;
mod token;

pub(crate) use child::{OwnedChild, Spawned};
pub(crate) use identity::{Identity, identify, is_alive};
pub(crate) use line_pump::spawn_line_pump;
#[cfg(any(test, feature = "testing"))]
pub(crate) use reaper::ReaperHandle;
pub(crate) use reaper::forget as forget_token;
pub(crate) use reaper::register as register_token;
pub use reaper::run_reaper;
pub(crate) use role_command::get as role_command;
#[cfg(any(test, feature = "testing"))]
pub(crate) use role_command::set as set_role_command;
pub(crate) use run_dir::{
    CLEAN_DIR, KEPT as RUN_DIR_KEPT, LOCK as RUN_DIR_LOCK, keep as keep_in_run_dir,
    try_lock as try_lock_run_dir,
};
pub(crate) use sweep::{carriers, sweep};
pub(crate) use token::{OWNER_ENV, new_token};
