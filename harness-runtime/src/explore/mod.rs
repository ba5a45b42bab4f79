//! Exploring the orderings of a product's traffic with its agent.
//!
//! In an exploring run (`#[live_agent_test(explore = 200)]`), the product's requests, the
//! agent's responses, the events a product's stream delivers and the product's own point passes
//! are decision points: the [`Scheduler`] holds each until the system is quiet, then lets one
//! go, chosen by a search strategy. The runner repeats the body under different schedules
//! ([`explorer`]), shrinks a failing one and prints the line that replays it.

pub(crate) mod explorer;
mod focus;
mod schedule;
mod scheduler;
mod step;
mod strategy;
mod trace;

pub(crate) use focus::{Focus, Point};
pub(crate) use schedule::{Choice, Schedule, fnv1a64};
pub(crate) use scheduler::{SETTLE_CEILING, Scheduler};
pub(crate) use step::Step;
pub(crate) use strategy::Plan;
pub(crate) use trace::RunRecord;
