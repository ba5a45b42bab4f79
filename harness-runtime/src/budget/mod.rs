//! Budgets: what a scenario's turns spent (tokens and cost as OpenCode reports them, the model
//! requests' timing from the model stream), checked against the limits its attribute states;
//! and the run's ceiling on live-model spend, which stops new live-model scenarios from
//! starting once this process's have spent it.

mod ceiling;
mod check;
mod measure;
mod spend;

pub(crate) use ceiling::{add as add_to_run, admit as admit_live, summary as run_summary};
pub(crate) use check::{breaches, unchecked};
pub(crate) use measure::{is_live_model, measure};
#[cfg(test)]
pub(crate) use spend::TurnSpend;
pub(crate) use spend::{Clock, Spend};
