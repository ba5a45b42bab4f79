//! Evidence: an ordered recorder of structured facts, one redactor, and insta snapshots.

mod recorder;
mod redact;

pub use recorder::Evidence;
pub use redact::Redactor;
