//! What can be wrong with a wire fault a scenario asks for.

use crate::gates::GateError;

/// A wire fault that cannot be armed. The message names the fault's argument and what is wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// The route is not a route pattern of OpenCode's API (`POST /session/{id}/abort`).
    #[error("wire fault on `{route}`: {source}")]
    Route {
        /// The route as written.
        route: String,
        /// What is wrong with it: malformed, an unknown placeholder, or no such OpenCode route.
        #[source]
        source: GateError,
    },
    /// The event type is not one OpenCode's event streams carry (`permission.asked`).
    #[error("wire fault at event `{event_type}`: {source}")]
    EventType {
        /// The type as written.
        event_type: String,
        /// What is wrong with it.
        #[source]
        source: GateError,
    },
    /// The status cannot answer a request.
    #[error(
        "wire fault on `{route}`: {status} is not a final HTTP status; answer with one in \
         200..=599"
    )]
    Status {
        /// The route the fault was for.
        route: String,
        /// The status as given.
        status: u16,
    },
    /// The count of events is zero.
    #[error("wire fault at event `{event_type}`: events are counted from 1 (the next one), not 0")]
    ZeroCount {
        /// The event type the fault was for.
        event_type: String,
    },
}
