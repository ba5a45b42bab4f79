//! Skips decided while the scenario runs: `live.skip(..)` (a capability the agent did not
//! exercise) and a missing OpenCode (a requirement: failed under `LIVE_STRICT=1`).

use harness_runtime::__private::{Outcome, Scenario, ScenarioFuture, ScenarioOptions};
use harness_runtime::AgentKind;
use harness_runtime::prelude::*;

/// The reason `skips_with_reason` gives.
pub(crate) const REASON: &str = "the model answered in prose instead of calling the tool";

#[live_agent_test]
async fn skips_with_reason(live: &mut Live) -> anyhow::Result<()> {
    Err(live.skip(REASON).into())
}

/// Provisions OpenCode and expects it missing: the test runs the binary with `PATH` stripped,
/// `LIVE_OPENCODE_BIN` unset and a cwd without `node_modules`.
async fn opencode_missing(live: &mut Live) -> Outcome {
    match live.opencode().await {
        Ok(_) => Err("OpenCode was found, but the test hid it".into()),
        Err(e) => Err(format!("{e}").into()),
    }
}

fn opencode_missing_body(live: &mut Live) -> ScenarioFuture<'_> {
    Box::pin(opencode_missing(live))
}

// Registered by hand rather than with `#[live_agent_test]`: discovery walks up from the test
// crate's `CARGO_MANIFEST_DIR`, and this crate sits in a checkout whose root has `node_modules`.
// An adopter crate without one is what this scenario stands for, so its manifest dir is `/`.
harness_runtime::__private::inventory::submit! {
    Scenario {
        module_path: "selftest_scenarios::run_skips",
        function: "opencode_missing",
        file: file!(),
        line: line!(),
        manifest_dir: "/",
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
        options: ScenarioOptions {
            timeout: Some(std::time::Duration::from_secs(30)),
            requires: &["SELFTEST_SCRATCH"],
            agent: AgentKind::OpenCode,
            ..ScenarioOptions::DEFAULT
        },
        body: opencode_missing_body,
    }
}
