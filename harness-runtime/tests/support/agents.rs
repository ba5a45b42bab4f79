//! Shared by the test binaries that provision real agents outside a `live` suite.

use std::path::PathBuf;
use std::time::Duration;

use harness_runtime::opencode::testing::{self, ScenarioInfo};
use harness_runtime::opencode::{Agent, AgentOptions, ProvisionError};
use harness_runtime::{Live, ScenarioOptions};

/// The reaper role of this test binary: libtest's main cannot dispatch roles, so the reaper is
/// reached through this ignored test (see `live`).
#[test]
#[ignore = "entry point of the reaper role, run by the tests that provision agents"]
fn reaper_role() {
    if std::env::var("HARNESS_RUNTIME_ROLE").as_deref() == Ok("reaper") {
        let _ = harness_runtime::process::run_reaper();
    }
}

/// This binary re-executed in the reaper role.
pub fn reaper_command() -> (PathBuf, Vec<String>) {
    let args = ["--exact", "support::reaper_role", "--ignored", "-q"].map(String::from);
    (std::env::current_exe().unwrap(), args.to_vec())
}

/// A scenario context for `name`, whose reaper is this binary's `reaper_role`.
pub fn live(name: &str) -> Live {
    let (program, args) = reaper_command();
    testing::use_reaper_command(program, args);
    Live::new(ScenarioInfo {
        name: name.to_string(),
        options: ScenarioOptions::DEFAULT,
        manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
    })
}

/// Whether real OpenCode is installed (`npm ci`); tests that need it pass vacuously, saying so,
/// where it is not, so `cargo test --workspace` holds on a machine without Node.js.
pub fn opencode_installed() -> bool {
    let found = testing::find_opencode(std::path::Path::new(env!("CARGO_MANIFEST_DIR"))).is_ok();
    if !found {
        eprintln!("skipped: opencode not found: run `npm ci`");
    }
    found
}

/// Startup is CPU-bound (3 to 16 s measured); these tests may start several servers at once on
/// a shared machine, so they allow more than the 60 s default.
pub async fn start(live: &mut Live) -> Result<Agent, ProvisionError> {
    live.opencode_with(AgentOptions::default().ready_timeout(Duration::from_secs(240)))
        .await
}
