//! Evidence: an ordered recorder of structured facts and their insta snapshots. Everything it
//! records passes through the scenario's [`Redactor`](crate::redact::Redactor).

mod baseline;
mod fact;
mod fact_capture;
mod from_turn;
mod observed;
mod observer;
mod recorder;
pub(crate) mod snapshot;
mod stored;
mod turn_summary;

pub(crate) use baseline::Baseline;
pub use observed::{Observed, ObservedSession};
pub(crate) use observer::{Observer, ObserverSource};
pub use recorder::{Evidence, counters};
pub(crate) use snapshot::{SnapshotTarget, assert_evidence};
pub use turn_summary::{
    EventTrace, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary,
};
