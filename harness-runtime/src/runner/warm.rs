//! Warming the shared servers (`LIVE_ISOLATION=shared`) before the first trial: as many as the
//! scenarios that will run at once need, and no more than those that will share. A scenario talking to the real model
//! (live, or recording its cassette) gets a server of its own, so it warms nothing: a recording
//! run would otherwise start servers that no scenario leases.

use std::path::Path;

use super::admission::{self, Admission};
use super::cli::Cli;
use super::descriptor::Scenario;
use crate::opencode;

/// Starts the shared servers the selected scenarios will lease from `pool`, in the background.
pub(crate) fn prewarm(pool: &opencode::SharedPool, scenarios: &[&'static Scenario], cli: &Cli) {
    let args = cli.args();
    if args.list {
        return;
    }
    let sharing: Vec<_> = scenarios
        .iter()
        .filter(|s| opencode::likely_shared(&s.options) && selected_on_scripted_or_replay(s, cli))
        .collect();
    let Some(first) = sharing.first() else {
        return;
    };
    // Not found: the scenarios report it themselves (skipped, or failed under LIVE_STRICT).
    let Ok(program) = opencode::find_opencode(Path::new(first.manifest_dir)) else {
        return;
    };
    let threads = args.test_threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    pool.prewarm(program, threads.min(sharing.len()));
}

/// Whether libtest will run `scenario` (the filters, `--exact`, `--skip`, ignored-ness, the
/// scenario's requirements and its peer, as the runner decides them; strictness aside: under it a
/// missing requirement fails instead of skipping, and runs no body either way) with the scripted
/// model or a replayed cassette, the plans that share a server.
fn selected_on_scripted_or_replay(scenario: &Scenario, cli: &Cli) -> bool {
    let args = cli.args();
    let ignored = scenario.options.ignore.is_some();
    cli.selects(&scenario.name())
        && if args.ignored {
            ignored
        } else {
            !ignored || args.include_ignored
        }
        && matches!(
            admission::admit(scenario, false),
            Admission::Run(resolution) if opencode::plan_shares(&resolution.plan)
        )
        && super::peers::absent(&scenario.name()).is_none()
}
