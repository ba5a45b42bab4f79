//! Which model a scenario talks to: scripted, live, record or replay.

use std::path::{Path, PathBuf};

use crate::scenario::ScenarioOptions;

/// How the scenario's model is served.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum ModelPlan {
    /// The embedded scripted model (every scenario without `cassette` or real-model `requires`).
    #[default]
    Scripted,
    /// The real model of `OPENCODE_CONFIG_CONTENT`, talked to directly; nothing is recorded.
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

/// The plan of the scenario `name` (`<topic>::<fn>`) of the crate at `manifest_dir`.
pub(crate) fn plan(
    options: &ScenarioOptions,
    name: &str,
    manifest_dir: &Path,
) -> Result<ModelPlan, String> {
    let _ = (name, manifest_dir);
    let real = options.requires.contains(&crate::settings::CONFIG_CONTENT);
    Ok(if real {
        ModelPlan::Live
    } else {
        ModelPlan::Scripted
    })
}
