//! Model cassettes: a real model's traffic recorded once, replayed deterministically.
//!
//! A scenario marked `cassette` runs in one of three model modes, decided per scenario by
//! [`plan`]: replay (its cassette exists), record (`LIVE_CASSETTE=record` with the real-model
//! variables), or live (the real model, nothing recorded). Everything a cassette takes is
//! here: finding it (`plan`), its file and format (`file`, `format`), the normalized requests
//! and their matching (`apis`, `matching`), serving it (`replay`), the relay that records
//! one and its upstream (`relay`, `tape`, `upstream`), and a scenario's use of them through
//! its model slot (`scenario`). The model server (`crate::model`) knows none of it: it is
//! handed the replay or the relay as its recorded answers (`crate::model::RecordedAnswers`).

mod apis;
mod command;
mod drift;
mod error;
mod file;
mod format;
mod https;
mod matching;
mod plan;
mod provenance;
// `pub(crate)`: the model check (`opencode::config`) reads OpenCode's catalog too.
pub(crate) mod providers;
mod relay;
mod replay;
mod replay_config;
mod retry;
mod scenario;
mod scrub;
mod stream_redaction;
mod tape;
mod timing;
mod upstream;
mod usage;
mod wire;

#[cfg(test)]
mod api_round_trip_tests;
#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod header_tests;
#[cfg(test)]
mod retry_tests;
#[cfg(test)]
mod round_trip_tests;
#[cfg(test)]
mod test_support;
#[cfg(test)]
mod verify_tests;

pub(crate) use command::rerecord_command;
pub(crate) use error::CassetteError;
pub(crate) use format::Verdict;
// `testing::read_cassette` reads a file as a replay does.
#[cfg(feature = "testing")]
pub(crate) use file::load;
#[cfg(test)]
pub(crate) use plan::{CassetteSettings, assessed_as, resolve};
pub(crate) use plan::{Resolution, plan, resolution};
#[cfg(test)]
pub(crate) use provenance::Freshness;
pub(crate) use replay_config::PROVIDER_ID as REPLAY_PROVIDER_ID;
pub(crate) use scenario::{
    RunEnd, finish_scenario, live_config, record_config, replay_config, upstream_gave_up,
};
pub(crate) use timing::{RequestTiming, model_requests};
// The plan's type is the model slot's, which carries it; the runner knows it by this name.
pub(crate) use crate::model::ModelPlan;
