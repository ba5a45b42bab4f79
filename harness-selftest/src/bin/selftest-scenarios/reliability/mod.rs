//! The scenarios of `tests/reliability` (reliability at scale).

mod bad_input;
pub(crate) mod daemon;
mod mix;
mod real;
mod soak;
