//! The agent's sandbox: Landlock confines an agent server and every process it starts to its
//! scenario's root (writes), what ordinary tools and the agent's program need (reads), the
//! scenario's own ports (TCP connect) and its own processes (signals).
//!
//! No unsafe code and nothing between fork and exec: the runner starts its own binary in the
//! sandbox launcher role ([`run_launcher`]), which confines itself, a single-threaded process,
//! and then `exec`s the agent. The pid, process group and owner mark the runner gave the
//! launcher stay the agent's. Linux only; elsewhere (and on kernels without Landlock) the
//! decision ([`current`]) says why the agent runs unconfined, or fails under `CI` or
//! `LIVE_STRICT=1`, as any missing prerequisite does.

mod error;
mod kernel;
mod launch;
mod launcher;
mod policy;
mod program;
mod spawn;
mod state;
mod wrapper;

pub(crate) use error::SandboxError;
pub(crate) use launch::Launch;
pub(crate) use launcher::run_launcher;
pub(crate) use policy::Policy;
pub(crate) use program::{program_node_modules, program_paths};
pub(crate) use spawn::{SpawnError, Start};
pub(crate) use state::current;
pub(crate) use wrapper::script as wrapper_script;
