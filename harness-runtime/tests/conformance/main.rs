//! The conformance suite: each interaction a client has with OpenCode, run against real
//! OpenCode (with the scripted model) and against the fixture agent, as `<group>::<interaction>::
//! real` and `…::fixture`. Each run yields a normalized transcript (requests, statuses, answers
//! with volatile values as placeholders, the ordered event types); both must equal the
//! interaction's reference transcript in `transcripts/`, recorded from real OpenCode, apart from
//! the deliberate differences listed in `differences.rs`. A difference fails naming the
//! interaction, the route and the first differing field with both values.
//!
//! `CONFORMANCE_RECORD=1 cargo test -p harness-runtime --test conformance -- real` rewrites the
//! references from real OpenCode (review the diff); see docs/conformance.md.

harness_runtime::main!();

#[macro_use]
mod interaction;
mod differences;
mod reference;
mod talk;
mod transcript;

mod asks;
mod comparison;
mod control;
mod errors;
mod messages;
mod model;
mod model_apis;
mod prompts;
mod sessions;
mod structured;
mod tui;
