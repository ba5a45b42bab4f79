//! The per-scenario context handed to every `#[live_agent_test]` function.

use std::path::PathBuf;
use std::sync::Arc;

use crate::evidence::Evidence;
use crate::redact::Redactor;
use crate::scenario::ScenarioOptions;

/// What a scenario knows about itself.
#[derive(Clone, Debug)]
pub struct ScenarioInfo {
    /// `<topic>::<fn>`.
    pub name: String,
    /// The attribute's options.
    pub options: ScenarioOptions,
    /// The test crate's manifest dir: `snapshots/` lives below it.
    pub manifest_dir: PathBuf,
    /// Asserts the evidence snapshot from the scenario's own file and crate:
    /// `harness_runtime::snapshot_assertion!()` where a context is made by hand.
    pub snapshot_assertion: crate::evidence::SnapshotAssertion,
}

/// The context of one scenario: provisions agents, scripts the model, gates operations and
/// records redacted evidence. Everything it started is stopped when the scenario ends, whether
/// it passed, failed, panicked or timed out.
pub struct Live {
    pub(crate) info: ScenarioInfo,
    pub(crate) redactor: Arc<Redactor>,
    pub(crate) evidence: Evidence,
    pub(crate) model: crate::model::ModelSlot,
    pub(crate) agents: crate::opencode::AgentSlot,
    pub(crate) fixture: crate::fixture::FixtureControl,
    pub(crate) gates: Arc<crate::gates::Gates>,
    pub(crate) skip: Option<Skip>,
}

/// Why a scenario ended as skipped rather than passed or failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Skip {
    pub(crate) reason: String,
    /// A missing requirement (a variable, the OpenCode binary): failed instead under
    /// `LIVE_STRICT=1`. A capability the agent did not exercise is skipped in every mode.
    pub(crate) strict_fails: bool,
}

/// The error a scenario returns after [`Live::skip`]: the runner reports the scenario as
/// skipped with the reason, whatever the body returned after it.
#[derive(Debug, thiserror::Error)]
#[error("skipped: {reason}")]
pub struct Skipped {
    reason: String,
}

impl Live {
    /// A context for the scenario `info`. The runner makes one per trial.
    pub fn new(info: ScenarioInfo) -> Self {
        let redactor = Arc::new(Redactor::for_scenario());
        // Diagnostics name programs under the checkout (the test binary re-executed as the
        // fixture agent, `node_modules/.bin/opencode`): where a user cloned is not evidence.
        redactor.add_path(&info.manifest_dir, "[crate]");
        Self {
            evidence: Evidence::new(redactor.clone()),
            model: Default::default(),
            agents: Default::default(),
            fixture: Default::default(),
            // The attribute's gate names were validated at compile time by the macro.
            gates: Arc::new(
                crate::gates::Gates::from_names(info.options.gates)
                    .unwrap_or_else(|e| panic!("invalid `gate` option: {e}")),
            ),
            redactor,
            info,
            skip: None,
        }
    }

    /// Ends the scenario as skipped with `reason`: for a capability the agent did not exercise
    /// (the model answered in prose instead of calling the tool), which is neither a pass nor a
    /// failure. Return the result: `return Err(live.skip("the model did not call the tool").into())`.
    /// The reason is shown by `cargo test` and counts as skipped in every mode, `LIVE_STRICT`
    /// included.
    pub fn skip(&mut self, reason: impl Into<String>) -> Skipped {
        let reason = self.redactor.redact(&reason.into());
        self.skip = Some(Skip {
            reason: reason.clone(),
            strict_fails: false,
        });
        Skipped { reason }
    }

    /// Marks the scenario skipped for a missing requirement (failed under `LIVE_STRICT=1`).
    pub(crate) fn skip_for_requirement(&mut self, reason: String) {
        let reason = self.redactor.redact(&reason);
        self.skip = Some(Skip {
            reason,
            strict_fails: true,
        });
    }

    /// The scenario's name, `<topic>::<fn>`.
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The scenario's options.
    pub fn options(&self) -> &ScenarioOptions {
        &self.info.options
    }

    /// The redactor every output of this scenario passes through.
    pub fn redactor(&self) -> &Arc<Redactor> {
        &self.redactor
    }

    /// Registers a value that must never appear in evidence, output or failure messages.
    pub fn secret(&self, value: impl AsRef<str>) {
        self.redactor.add_secret(value.as_ref());
    }

    /// Prints a progress line on stderr (redacted): libtest-mimic prints a result only at the end,
    /// so long scenarios say what they are doing and waiting for.
    pub fn progress(&self, message: impl AsRef<str>) {
        crate::runner::progress(&self.info.name, &self.redactor.redact(message.as_ref()));
    }

    /// Ends the scenario: reports unanswered model requests, stops every agent it started, and
    /// removes its roots after a pass (keeps them, printing their paths, after a failure).
    /// The runner calls this after the body, whatever its outcome; `Drop` of the slots is the
    /// synchronous fallback when it cannot run (a panic inside the runtime, a killed runtime).
    pub(crate) async fn finish(&mut self, passed: bool) -> Result<(), String> {
        // An armed gate must never hold teardown (e.g. `stop` armed by a scenario that failed
        // before releasing it).
        self.gates.release_all();
        let model = self.model.finish(&self.redactor);
        let agents = self
            .agents
            .finish(passed && model.is_ok(), &self.redactor)
            .await;
        model.and(agents)
    }

    /// The ordered recorder of this scenario's evidence.
    pub fn evidence(&self) -> &Evidence {
        &self.evidence
    }
}
