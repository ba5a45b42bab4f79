//! Model cassettes: a real model's traffic recorded once, replayed deterministically.
//!
//! A scenario marked `cassette` runs in one of three model modes, decided per scenario by
//! [`plan`]: replay (its cassette exists), record (`LIVE_CASSETTE=record` with the real-model
//! variables), or live (the real model, nothing recorded). The model server (`crate::model`)
//! serves a replay and relays a recording; this module owns the file, its format, the
//! normalized requests and their matching, and the upstream of a recording.

mod command;
mod error;
mod file;
mod format;
mod matching;
mod normalize;
mod plan;
mod replay_config;
mod scrub;
mod stream_redaction;
mod tape;
mod upstream;

pub(crate) use command::{display_path, rerecord_command};
pub use error::CassetteError;
pub(crate) use file::{load, save};
pub(crate) use format::{
    Cassette, FORMAT, Interaction, NormalizedRequest, RecordedResponse, StreamEnd, WireApi,
    chunk_data, chunk_text,
};
pub(crate) use matching::{diagnose, find_unused};
pub(crate) use normalize::normalize;
#[cfg(test)]
pub(crate) use plan::{CassetteSettings, resolve};
pub(crate) use plan::{ModelPlan, Resolution, plan, resolution};
pub(crate) use replay_config::{PROVIDER_ID as REPLAY_PROVIDER_ID, opencode_config};
pub(crate) use scrub::restore_json;
pub(crate) use tape::{Head, Tape};
pub(crate) use upstream::Upstream;
