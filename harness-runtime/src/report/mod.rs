//! The run report: one self-contained `index.html` per run with every scenario's outcome and a
//! timeline of what the agent, the model and the harness did (issue #19).
//!
//! A base module: the layers that do the work (provisioning, client, model, gates, evidence)
//! note what happened through [`note`]; the runner collects, redacts and writes. It uses only
//! `redact`, `settings` and the scenario's options.

mod collector;
mod error;
mod location;
mod page;
mod record;
mod run;
mod writer;

pub(crate) use collector::{
    Collector, install_on_this_thread, is_collecting, kept_root, note, note_keyed,
    snapshot_mismatch,
};
pub(crate) use location::{report_dir, run_id};
pub(crate) use record::{Lane, Outcome, ScenarioRecord};
pub(crate) use writer::{regenerate, write_scenario};
