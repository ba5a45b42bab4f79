//! The one redactor every layer uses: evidence, progress output, diagnostics, failure messages
//! and kept logs. Ids and UUIDs become numbered placeholders that keep identity, ports, paths,
//! times and durations named ones, and secrets `[secret]` in every encoded form.
//!
//! A base module: every other module may use it, and it uses none but the dependency-free
//! variable names of `settings::names`.

mod overlaps;
mod patterns;
mod redactor;
mod secrets;

pub use redactor::Redactor;
pub(crate) use redactor::{key_placeholder, number_placeholder};
pub(crate) use secrets::is_secret_name;
