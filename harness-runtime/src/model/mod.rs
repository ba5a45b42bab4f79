//! The embedded scripted model: an OpenAI- and Ollama-compatible server on loopback.
//!
//! A scenario queues [`Reply`]s and adds [`Rule`]s on `live.model()`; OpenCode, configured by
//! [`ModelSlot`]'s `opencode_config`, talks to it over real HTTP. Every request is recorded
//! ([`ModelRequest`]); one nothing answers is a miss, and a scripted call of a tool the request
//! does not offer is a script mistake: either fails the scenario at its end.
//!
//! A cassette scenario's server answers from elsewhere: a recorded cassette
//! (replay), or the real model through the recording relay (record).

mod cassette_answer;
mod cassette_wire;
mod catalog;
mod error;
mod frames;
mod ollama;
mod openai;
mod recording;
mod relay;
mod replay;
mod reply;
mod reset;
mod rules;
mod scripted_model;
mod server;
mod source;
mod unserved;
mod wire_error;
// `pub(crate)` so `testing` can make its `ModelSlot` public; scenarios reach it as `live.model()`.
pub(crate) mod slot;

#[cfg(test)]
mod cassette_fault_tests;
#[cfg(test)]
mod cassette_round_trip_tests;
#[cfg(test)]
mod cassette_test_support;

pub use error::ModelError;
pub use recording::{Answer, Api, ModelRequest, ModelRequestSummary};
pub use reply::{Reply, STRUCTURED_OUTPUT_TOOL, ScriptedToolCall, StallHandle, Usage};
pub use rules::{Matcher, Rule};
pub use scripted_model::ScriptedModel;
pub(crate) use slot::ModelSlot;
pub use slot::{MODEL_ID, PROVIDER_ID};
