//! Every environment variable the runtime reads: its name ([`names`], dependency-free), the one
//! rule every value follows ([`rule`]), and a reader per variable, typed.
//!
//! - [`user`]: the README's settings, checked together by the runner before any trial;
//! - [`internal`]: what the harness sets on the processes it starts (roles, the fixture's knobs);
//! - [`foreign`]: the system's, CI's, cargo's, nextest's and insta's, read as their owners define
//!   them;
//! - [`prerequisite`]: the one rule for a missing prerequisite (skip, or fail under `CI` or
//!   `LIVE_STRICT=1`).

mod foreign;
mod internal;
pub(crate) mod names;
mod prerequisite;
mod rule;
mod user;

pub(crate) use foreign::{
    all_unicode, cargo_package, cargo_target_dir, insta_overwrites, nextest_process_per_test,
    nextest_run_id, path_var, under_nextest, unicode,
};
pub(crate) use internal::{
    FixtureAgentEnv, Role, acp_forward, in_helper_role, inherited_names, not_for_agents,
    owner_mark, pool_runner, role, sandbox_launch,
};
pub(crate) use names::*;
pub use prerequisite::MissingPrerequisite;
#[cfg(test)]
pub(crate) use prerequisite::unit_test_runs;
pub(crate) use rule::{Flaw, raw, text};
pub(crate) use user::{
    CassetteMode, HistoryPlace, ReportPlace, cassette_dir, cassette_max_age, cassette_mode,
    check_all, explore_confirm, explore_quiet, explore_seed, fixture_bin, history_place, isolation,
    keep_roots, model_concurrency, nextest_skip_fails, opencode_bin, report_place, run_max_cost,
    run_max_tokens, sandbox_setting, schedule, snapshot_dir, strict, timeout_scale,
};
pub use user::{Isolation, scaled};
