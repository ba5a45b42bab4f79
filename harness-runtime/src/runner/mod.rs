//! The libtest-mimic runner: one trial per scenario, a tokio runtime and a ceiling each.

mod entry;
mod order;
mod panic;
mod progress;
mod registry;
mod roles;
mod trial;
mod warm;

pub use entry::run;
pub(crate) use progress::progress;
pub use roles::{ROLE_ENV, run_role};
