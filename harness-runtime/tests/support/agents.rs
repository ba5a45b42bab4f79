//! Provisioning real agents outside a `live` suite: a scenario context, a patient start, and
//! the helper roles (reaper, sandbox launcher) of the test binary.

use std::path::PathBuf;
use std::time::Duration;

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::Live;
use harness_runtime::opencode::{Agent, AgentOptions, ProvisionError};
use harness_runtime::testing::{self, ScenarioInfo};
use harness_selftest::prerequisites::{Test, libtest_name};
use harness_selftest::test;

/// The helper roles of this test binary (the reaper, the sandbox launcher): the tests' `main`
/// does not dispatch roles, so they are reached through this ignored test (see `live`).
fn helper_role() {
    if std::env::var_os(harness_runtime::testing::ROLE_ENV).is_some() {
        let _ = harness_runtime::runner::run_role();
    }
}

/// The tests every binary that provisions agents holds: the helper roles' entry point.
pub fn tests() -> Vec<Test> {
    vec![
        test!(helper_role)
            .ignore("entry point of the helper roles, run by the tests that provision agents"),
    ]
}

/// This binary re-executed in a helper role (the role is in its environment).
pub fn role_command() -> (PathBuf, Vec<String>) {
    // The name `test!(helper_role)` gives the entry point.
    let entry = libtest_name(module_path!(), "helper_role");
    let args = ["--exact", &entry, "--ignored", "-q"].map(String::from);
    (std::env::current_exe().unwrap(), args.to_vec())
}

/// A scenario context for `name`, whose helpers are this binary's `helper_role`.
pub fn live(name: &str) -> Live {
    live_with(name, ScenarioOptions::DEFAULT)
}

/// [`live`] with the attribute's `options` (an agent kind, an isolation level).
pub fn live_with(name: &str, options: ScenarioOptions) -> Live {
    let (program, args) = role_command();
    testing::use_role_command(program, args);
    testing::live(ScenarioInfo {
        name: name.to_string(),
        options,
        manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
    })
}

/// Provisions an agent with the default options, started patiently.
pub async fn start(live: &mut Live) -> Result<Agent, ProvisionError> {
    live.opencode_with(patient(AgentOptions::default())).await
}

/// `options` with a patient start: startup is CPU-bound (3 to 16 s measured) and these tests may
/// start several servers at once on a shared machine, so they allow more than the 60 s default.
pub fn patient(options: AgentOptions) -> AgentOptions {
    options.ready_ceiling(Duration::from_secs(240))
}
