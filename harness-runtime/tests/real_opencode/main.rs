//! Tests that need what `npm ci` installs (real OpenCode, its CLI, TUI and SDK): provisioning,
//! the client and the models catalog against real OpenCode, real clients against the fixture
//! agent, and agents with their forwarder. One binary whose `main` runs every module's tests;
//! libtest's own harness cannot skip at run time, so each is run, skipped with the reason, or
//! failed under CI (`harness_selftest::prerequisites`).

use std::process::ExitCode;

use harness_selftest::prerequisites;

#[path = "../fixture_common/mod.rs"]
mod fixture_common;
#[path = "../support/mod.rs"]
mod support;

mod client_opencode;
mod fixture_real_cli;
mod fixture_real_tui;
mod fixture_sdk;
mod forward_agents;
mod forward_real_clients;
mod model_apis;
mod models_catalog;
mod provisioning;

fn main() -> ExitCode {
    prerequisites::run(
        support::tests()
            .into_iter()
            .chain(client_opencode::tests())
            .chain(fixture_real_cli::tests())
            .chain(fixture_real_tui::tests())
            .chain(fixture_sdk::tests())
            .chain(forward_agents::tests())
            .chain(forward_real_clients::tests())
            .chain(model_apis::tests())
            .chain(models_catalog::tests())
            .chain(provisioning::tests()),
    )
}
