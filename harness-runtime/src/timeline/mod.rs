//! What happened when, in this scenario: provisioning, the turn's events, model requests, tools,
//! asks, gates, teardown, kept roots and a snapshot that did not match. Every layer writes to it
//! through [`note`]; the run report reads it when the scenario ends.
//!
//! Ambient, not passed: the layers that write to it (the client's event stream, the embedded
//! model server, provisioning, gates, evidence) run inside the scenario's runtime behind public
//! APIs that also work outside any scenario, and have no handle to the scenario. Each trial has a
//! runtime of its own, so a timeline installed on the trial's thread and on every thread of that
//! runtime ([`install_on_this_thread`]) reaches them all without a parameter on every call; a
//! thread with none installed (a standalone client, most unit tests) notes nowhere, at the cost
//! of one thread-local read.
//!
//! A base module: it imports no other module of the crate, so every layer may write to it.

mod ambient;
mod collected;
mod collector;
mod entry;

pub(crate) use ambient::{
    current, install_on_this_thread, is_collecting, kept_root, note, note_keyed, snapshot_mismatch,
};
pub(crate) use collected::{Collected, KeptRoot, SnapshotDiff};
pub(crate) use collector::Collector;
pub(crate) use entry::{Entry, Lane};
