//! What every trial sets up the same way, one run of its body or many: its runtime, its ceilings,
//! the run report's collector on its thread, and the message of a ceiling hit.

use std::sync::Arc;
use std::time::Duration;

use super::descriptor::Scenario;
use super::panic::{self as panics, RedactorCell};
use crate::settings;

/// The scenario ceiling when the attribute gives none ("clearly stuck", before scaling).
pub(super) const DEFAULT_CEILING: Duration = Duration::from_secs(300);
/// The ceiling of `Live::finish` (stopping agents, reporting the model), before scaling.
pub(super) const FINISH_CEILING: Duration = Duration::from_secs(60);
/// How long dropping the runtime waits for blocking tasks, before scaling.
pub(super) const SHUTDOWN_CEILING: Duration = Duration::from_secs(10);

/// A runtime per trial: a scenario cannot starve or poison another one's tasks.
pub(super) fn runtime(
    cell: &RedactorCell,
    collector: Option<Arc<crate::timeline::Collector>>,
) -> std::io::Result<tokio::runtime::Runtime> {
    let on_start = cell.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("live-scenario-worker")
        .on_thread_start(move || {
            panics::set_for_this_thread(Some(on_start.clone()));
            crate::timeline::install_on_this_thread(collector.clone());
        })
        .on_thread_stop(|| {
            panics::set_for_this_thread(None);
            crate::timeline::install_on_this_thread(None);
        })
        .build()
}

/// The run report's collector on the trial thread, until the trial ends.
pub(super) struct CollectingGuard;

impl CollectingGuard {
    pub(super) fn install(collector: Option<Arc<crate::timeline::Collector>>) -> Self {
        crate::timeline::install_on_this_thread(collector);
        CollectingGuard
    }
}

impl Drop for CollectingGuard {
    fn drop(&mut self) {
        crate::timeline::install_on_this_thread(None);
    }
}

pub(super) fn timeout_message(scenario: &Scenario, name: &str, ceiling: Duration) -> String {
    let source = match scenario.options.timeout {
        Some(timeout) => format!("timeout = \"{}\"", humantime::format_duration(timeout)),
        None => format!(
            "the default of {}",
            humantime::format_duration(DEFAULT_CEILING)
        ),
    };
    let scale = settings::timeout_scale().unwrap_or(1.0);
    format!(
        "`{name}` timed out: it did not finish within its ceiling of {} ({source} × {}={scale}); \
         if it is only slow, raise `timeout` in its #[live_agent_test(...)] or set \
         {}=2 on a slow machine",
        humantime::format_duration(ceiling),
        settings::TIMEOUT_SCALE,
        settings::TIMEOUT_SCALE,
    )
}
