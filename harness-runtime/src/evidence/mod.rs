//! Evidence: an ordered recorder of structured facts and their insta snapshots. Everything it
//! records passes through the scenario's [`Redactor`](crate::redact::Redactor).

mod fact;
mod from_turn;
mod recorder;
mod snapshot;
mod stored;
mod turn;

pub use recorder::{Evidence, counters};
pub use snapshot::SnapshotAssertion;
pub use turn::{EventTrace, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary};
