//! Warm workspaces: directories of a shared server whose OpenCode instance is already booted,
//! reused by the next scenario with the same config once reset (see `docs/isolation.md`).

mod key;
mod relay;
mod reset;
mod seat;

pub(crate) use key::{SeatConfig, seat_config};
pub(crate) use relay::{ModelRelay, runtime};
pub(crate) use reset::{Baseline, instance_state};
pub(crate) use seat::{Reset, Seat};
