//! Provisioning real agents outside a `live` suite: a scenario context, a patient start, and
//! the reaper role of the test binary.

use std::path::PathBuf;
use std::time::Duration;

use harness_runtime::opencode::{Agent, AgentOptions, ProvisionError};
use harness_runtime::testing::{self, ScenarioInfo};
use harness_runtime::{Live, ScenarioOptions};
use harness_selftest::prerequisites::{Test, libtest_name};
use harness_selftest::test;

/// The reaper role of this test binary: the tests' `main` does not dispatch roles, so the reaper
/// is reached through this ignored test (see `live`).
fn reaper_role() {
    if std::env::var(harness_runtime::runner::ROLE_ENV).as_deref() == Ok("reaper") {
        let _ = testing::run_reaper();
    }
}

/// The tests every binary that provisions agents holds: the reaper role's entry point.
pub fn tests() -> Vec<Test> {
    vec![
        test!(reaper_role)
            .ignore("entry point of the reaper role, run by the tests that provision agents"),
    ]
}

/// This binary re-executed in the reaper role.
pub fn reaper_command() -> (PathBuf, Vec<String>) {
    // The name `test!(reaper_role)` gives the entry point.
    let entry = libtest_name(module_path!(), "reaper_role");
    let args = ["--exact", &entry, "--ignored", "-q"].map(String::from);
    (std::env::current_exe().unwrap(), args.to_vec())
}

/// A scenario context for `name`, whose reaper is this binary's `reaper_role`.
pub fn live(name: &str) -> Live {
    let (program, args) = reaper_command();
    testing::use_reaper_command(program, args);
    testing::live(ScenarioInfo {
        name: name.to_string(),
        options: ScenarioOptions::DEFAULT,
        manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: harness_runtime::snapshot_assertion!(),
    })
}

/// Startup is CPU-bound (3 to 16 s measured); these tests may start several servers at once on
/// a shared machine, so they allow more than the 60 s default.
pub async fn start(live: &mut Live) -> Result<Agent, ProvisionError> {
    live.opencode_with(AgentOptions::default().ready_timeout(Duration::from_secs(240)))
        .await
}
