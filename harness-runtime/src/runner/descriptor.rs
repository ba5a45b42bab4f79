//! The registered descriptor of one scenario, built by `#[live_agent_test]` in a const context
//! and collected through `inventory`.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use crate::Live;
use crate::scenario::ScenarioOptions;

/// The boxed future of a scenario body, borrowing its [`Live`] context.
///
/// Not `Send`: each trial drives its scenario with `block_on` on its own runtime, so scenario
/// bodies may hold `!Send` values (insta's settings guards, `Rc`, …) across awaits.
pub type ScenarioFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + 'a>>;

/// The result of a scenario body: `Err` says why it failed.
pub type Outcome = Result<(), ScenarioFailed>;

/// Why a scenario body failed: the error it returned in its `Debug` form (anyhow's carries the
/// whole cause chain), not yet redacted; the runner redacts it and reports it as the failure.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ScenarioFailed {
    message: String,
}

impl ScenarioFailed {
    /// A failure saying `message`.
    pub fn new(message: impl Into<String>) -> Self {
        ScenarioFailed {
            message: message.into(),
        }
    }

    /// The message, for the runner to redact and report.
    pub fn into_message(self) -> String {
        self.message
    }
}

impl From<String> for ScenarioFailed {
    fn from(message: String) -> Self {
        ScenarioFailed::new(message)
    }
}

impl From<&str> for ScenarioFailed {
    fn from(message: &str) -> Self {
        ScenarioFailed::new(message)
    }
}

/// One registered scenario.
pub struct Scenario {
    /// `module_path!()` at the definition: the first segment is the test crate's name.
    pub module_path: &'static str,
    /// The function's name.
    pub function: &'static str,
    /// `file!()` at the definition.
    pub file: &'static str,
    /// `line!()` of the function.
    pub line: u32,
    /// `env!("CARGO_MANIFEST_DIR")` of the test crate: where `snapshots/` lives. Compiled in, so a
    /// test binary run on another machine needs `LIVE_SNAPSHOT_DIR` (see the README).
    pub manifest_dir: &'static str,
    /// `snapshot_assertion!()` at the definition: snapshots name this file and this crate's
    /// workspace, as insta's own macros written here would.
    pub snapshot_assertion: crate::evidence::snapshot::SnapshotAssertion,
    /// The attribute's options.
    pub options: ScenarioOptions,
    /// Calls the user's function and turns its return value into an [`Outcome`].
    pub body: for<'a> fn(&'a mut Live) -> ScenarioFuture<'a>,
}

inventory::collect!(Scenario);

impl Scenario {
    /// `<module path inside the test crate>::<fn>`, e.g. `tools::bash_runs`.
    pub fn name(&self) -> String {
        match self.module_path.split_once("::") {
            Some((_crate, inner)) => format!("{inner}::{}", self.function),
            None => self.function.to_string(),
        }
    }

    /// Every registered scenario, sorted by name.
    pub fn all() -> Vec<&'static Scenario> {
        let mut all: Vec<&'static Scenario> = inventory::iter::<Scenario>.into_iter().collect();
        all.sort_by_key(|s| s.name());
        all
    }
}

impl Debug for Scenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scenario")
            .field("name", &self.name())
            .field("file", &self.file)
            .field("line", &self.line)
            .field("options", &self.options)
            .finish()
    }
}

/// What a scenario function may return: `()` or `Result<(), E: Debug>`.
pub trait IntoOutcome {
    /// Converts the return value into pass or a failure message.
    fn into_outcome(self) -> Outcome;
}

impl IntoOutcome for () {
    fn into_outcome(self) -> Outcome {
        Ok(())
    }
}

impl<E: Debug> IntoOutcome for Result<(), E> {
    fn into_outcome(self) -> Outcome {
        // `{:?}` of anyhow::Error prints the whole cause chain, which is what a failure needs.
        self.map_err(|e| ScenarioFailed::new(format!("{e:?}")))
    }
}
