//! How a scenario's model is served: what its slot carries for whoever configures an agent.
//!
//! The runner decides it per scenario (`crate::cassette` resolves `LIVE_CASSETTE` and the
//! cassette's presence); the slot only holds it. The server itself never looks at it: it
//! serves its script, or the recorded answers it was given.

use std::path::PathBuf;

/// How the scenario's model is served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum ModelPlan {
    /// The embedded scripted model (every scenario without `cassette` or real-model `requires`).
    #[default]
    Scripted,
    /// The real model of `OPENCODE_CONFIG_CONTENT`, through the embedded relay (its retries and
    /// timing; directly when the relay cannot take the provider); nothing is recorded.
    Live,
    /// The real model, through the embedded relay, which writes the cassette at `path`.
    Record {
        /// `cassettes/<topic>__<fn>.json` (or below `LIVE_CASSETTE_DIR`).
        path: PathBuf,
    },
    /// The recorded responses of the cassette at `path`, served by the embedded model server.
    Replay {
        /// The cassette to serve.
        path: PathBuf,
    },
}

impl ModelPlan {
    /// Whether the scenario talks to the real model (and takes one of the run's live-model
    /// slots, `LIVE_MODEL_CONCURRENCY`). Exhaustive: a new plan must say.
    pub(crate) fn is_real_model(&self) -> bool {
        match self {
            ModelPlan::Live | ModelPlan::Record { .. } => true,
            ModelPlan::Scripted | ModelPlan::Replay { .. } => false,
        }
    }
}
