//! The libtest-mimic runner: one trial per scenario, a tokio runtime and a ceiling each.

mod admission;
mod cli;
pub(crate) mod descriptor;
mod entry;
mod explore;
mod live_slots;
mod order;
mod panic;
mod peers;
mod registry;
mod report_hook;
mod report_usage;
mod roles;
mod setup;
mod skips;
mod trial;
mod verdict;
mod warm;

pub use entry::run;
pub use roles::run_role;
