//! Evidence: an ordered recorder of structured facts, one redactor, and insta snapshots.

mod fact;
mod from_turn;
mod overlaps;
mod patterns;
mod recorder;
mod redact;
mod secrets;
mod snapshot;
mod stored;
mod turn;

pub use recorder::{Evidence, counters};
pub use redact::Redactor;
pub use turn::{EventTrace, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary};
