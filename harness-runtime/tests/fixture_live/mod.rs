//! Scenario contexts on the fixture agent for tests whose `main` is libtest's: the helper roles'
//! entry point (the reaper, the sandbox launcher re-execute the test binary with it selected)
//! and a context made as the runner makes one.

use std::path::PathBuf;

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::testing::{self, ScenarioInfo};
use harness_runtime::{AgentKind, Live};

/// The helper roles of this test binary.
#[test]
#[ignore = "entry point of the helper roles, run by the tests that start agents and products"]
fn helper_role() {
    if std::env::var_os(testing::ROLE_ENV).is_some() {
        let _ = harness_runtime::runner::run_role();
    }
}

/// A scenario context for `name` whose agent is the fixture agent.
pub fn live(name: &str) -> Live {
    let args = ["--exact", "fixture_live::helper_role", "--ignored", "-q"].map(String::from);
    testing::use_role_command(std::env::current_exe().unwrap(), args.to_vec());
    testing::use_fixture_program(PathBuf::from(env!("CARGO_BIN_EXE_live-fixture-agent")));
    testing::live(ScenarioInfo {
        name: name.to_string(),
        options: ScenarioOptions {
            agent: AgentKind::Fixture,
            ..ScenarioOptions::DEFAULT
        },
        manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: testing::snapshot_assertion!(),
    })
}
