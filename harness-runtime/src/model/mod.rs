//! The embedded scripted model: a server on loopback speaking the APIs of OpenCode's provider
//! packages: OpenAI chat completions, the OpenAI Responses API, Anthropic Messages, Google
//! Gemini, and Ollama's own.
//!
//! A scenario queues [`Reply`]s and adds [`Rule`]s on `live.model()`; OpenCode, configured by
//! its slot's `opencode_config`, talks to it over real HTTP. Every request is recorded
//! ([`ModelRequest`]); one nothing answers is a miss, and a scripted call of a tool the request
//! does not offer is a script mistake: either fails the scenario at its end.
//!
//! A cassette scenario's server answers from elsewhere: the recorded answers it was given
//! (`crate::cassette` gives a replayed cassette, or the relay recording the real model). Their
//! trait, `RecordedAnswers`, is all this module knows of cassettes.

mod anthropic;
mod catalog;
mod error;
// `pub(crate)` for recorded answers that stream as the script does (a replayed cassette).
pub(crate) mod frames;
mod gemini;
mod ollama;
mod openai;
mod output;
mod plan;
mod recorded_answers;
mod recording;
mod reply;
mod reset;
mod responses;
mod rules;
mod scripted_model;
mod server;
mod unserved;
mod wire_error;
// `pub(crate)` so `testing` can make its `ModelSlot` public; scenarios reach it as `live.model()`.
pub(crate) mod slot;

pub use error::ModelError;
pub(crate) use plan::ModelPlan;
pub(crate) use recorded_answers::{ChatRequest, RecordedAnswers};
pub use recording::{Answer, Api, ModelRequest, ModelRequestSummary};
pub use reply::{Reply, ScriptedToolCall, StallHandle, Usage};
pub use rules::{Matcher, Rule};
pub use scripted_model::ScriptedModel;
pub(crate) use slot::ModelSlot;
pub(crate) use slot::PROVIDER_ID;
