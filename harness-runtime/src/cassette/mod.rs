//! Model cassettes: a real model's traffic recorded once, replayed deterministically.
//!
//! A scenario marked `cassette` runs in one of three model modes, decided per scenario by
//! [`plan`]: replay (its cassette exists), record (`LIVE_CASSETTE=record` with the real-model
//! variables), or live (the real model, nothing recorded). The model server (`crate::model`)
//! serves a replay and relays a recording; this module owns the file, its format and the
//! matching of requests.

mod plan;

#[cfg(test)]
pub(crate) use plan::{CassetteSettings, resolve};
pub(crate) use plan::{ModelPlan, Resolution, plan, record_command, resolution};
