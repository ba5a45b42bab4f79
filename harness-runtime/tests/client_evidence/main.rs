//! The client against hand-made and recorded streams, the evidence (observer, redaction,
//! snapshots), and the crate's shape (module graph, public API): one test binary, a module per
//! former binary, so the tests link once.

#[path = "../fixture_live/mod.rs"]
mod fixture_live;

mod agent_table;
mod client_hostile;
mod client_replay;
mod evidence_observer;
mod evidence_redact;
mod evidence_snapshot;
mod module_graph;
mod public_api;
