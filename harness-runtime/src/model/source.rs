//! What answers the model server's chat requests: the scenario's script, a cassette being
//! replayed, or the relay recording a real model.

use std::fmt;

use super::relay::Relay;
use super::replay::Replay;

/// The server's source of answers.
pub(crate) enum Source {
    /// Queued replies and rules (`live.model()`).
    Script,
    /// A cassette's recorded responses.
    Replay(Replay),
    /// The real model, through the recording relay.
    Relay(Relay),
}

impl fmt::Debug for Source {
    /// The kind only: a relay holds the user's credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Script => "Script",
            Self::Replay(_) => "Replay",
            Self::Relay(_) => "Relay",
        })
    }
}
