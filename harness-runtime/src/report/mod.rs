//! The run report: one self-contained `index.html` per run with every scenario's outcome and
//! its timeline (what the agent, the model and the harness did, see [`crate::timeline`]).
//!
//! It reads a finished timeline, redacts it into one record per scenario and writes the record
//! and the page; the runner alone uses it (`runner::report_hook`). It uses only `timeline`,
//! `redact`, `settings` and the scenario's options.

mod error;
mod location;
mod page;
mod record;
mod run;
mod writer;

pub(crate) use location::{report_dir, run_id};
pub(crate) use record::{Outcome, ScenarioRecord};
pub(crate) use writer::{regenerate, write_scenario};
