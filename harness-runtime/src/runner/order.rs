//! The order trials start in. libtest-mimic starts them in the order it is given, so the
//! runner gives an order that keeps both cores busy: OpenCode's start and each scenario's first
//! turn are CPU-bound, the fixture agent's scenarios are not.
//!
//! 1. Fixture-agent scenarios: they start in milliseconds and lease nothing, so they run while
//!    the shared servers (`LIVE_ISOLATION=shared`) warm up instead of waiting for them.
//! 2. Scenarios with a server of their own (`isolation = "server"`, or all of them under
//!    `LIVE_ISOLATION=server`): under sharing they meet the pool already warm. Scenarios that
//!    must run side by side (the parallel-isolation pair) meet through a static, so they share
//!    a module: the modules with the most scenarios of this group start it, so that its first
//!    two scenarios start together (the fixture scenarios before them are short) instead of one
//!    holding a thread idle while the other waits behind a server start and a restart.
//! 3. Scenarios on shared servers.
//!
//! Live-model scenarios (the real model, live or recording) beyond the first
//! `LIVE_MODEL_CONCURRENCY` of them start after every other: they would wait for a live-model
//! slot holding a test thread ([`live_slots`](super::live_slots)), which by then blocks nothing.
//! The first ones start in their group's place, so the model is busy from the start.
//!
//! Name order within each group (and module). `--list` stays in name order; under nextest (a
//! process per scenario) the order is nextest's.

use std::cmp::Reverse;
use std::collections::HashMap;

use libtest_mimic::Arguments;

use super::descriptor::Scenario;
use crate::opencode;
use crate::scenario::AgentKind;
use crate::settings;

/// The groups, in the order they start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Fixture,
    OwnServer,
    Shared,
}

fn group(scenario: &Scenario) -> Group {
    if scenario.options.agent == AgentKind::Fixture {
        Group::Fixture
    } else if opencode::likely_shared(&scenario.options) {
        Group::Shared
    } else {
        Group::OwnServer
    }
}

/// `scenarios` (in name order) in the order their trials should start.
pub(crate) fn schedule(
    mut scenarios: Vec<&'static Scenario>,
    args: &Arguments,
) -> Vec<&'static Scenario> {
    if !args.list {
        let mut own_servers: HashMap<&str, usize> = HashMap::new();
        for scenario in scenarios.iter().filter(|s| group(s) == Group::OwnServer) {
            *own_servers.entry(scenario.module_path).or_default() += 1;
        }
        let module_size = |s: &Scenario| match group(s) {
            Group::OwnServer => own_servers[s.module_path],
            _ => 0,
        };
        // Stable: name order within a group and module.
        scenarios.sort_by_key(|s| (group(s), Reverse(module_size(s))));
        let strict = settings::strict();
        let live = |s: &Scenario| runs_live(s, args, strict);
        scenarios = live_beyond_the_cap_last(scenarios, settings::model_concurrency(), live);
    }
    scenarios
}

/// `scenarios` with the live ones (by `live`) after the first `cap` of them moved to the end,
/// each part in its order.
fn live_beyond_the_cap_last(
    scenarios: Vec<&'static Scenario>,
    cap: usize,
    live: impl Fn(&Scenario) -> bool,
) -> Vec<&'static Scenario> {
    let mut seen = 0;
    let (mut first, mut last) = (Vec::new(), Vec::new());
    for scenario in scenarios {
        if live(scenario) {
            seen += 1;
            if seen > cap {
                last.push(scenario);
                continue;
            }
        }
        first.push(scenario);
    }
    first.extend(last);
    first
}

/// Whether `scenario` will run (the filters select it, it is not ignored, it is admitted) and
/// talk to the real model.
fn runs_live(scenario: &Scenario, args: &Arguments, strict: bool) -> bool {
    let name = scenario.name();
    // libtest-mimic's matching: whole names under `--exact`, else substrings.
    let matches = |pattern: &str| {
        if args.exact {
            name == pattern
        } else {
            name.contains(pattern)
        }
    };
    let selected =
        args.filter.as_deref().is_none_or(matches) && !args.skip.iter().any(|s| matches(s));
    let ignored = scenario.options.ignore.is_some() && !(args.ignored || args.include_ignored);
    selected
        && !ignored
        && matches!(
            super::admission::admit(scenario, strict),
            super::admission::Admission::Run(resolution) if resolution.plan.is_real_model()
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private::ScenarioFuture;
    use crate::scenario::ScenarioOptions;
    use crate::{Isolation, Live};

    fn body(_: &mut Live) -> ScenarioFuture<'_> {
        Box::pin(async { Ok(()) })
    }

    fn scenario(function: &'static str, options: ScenarioOptions) -> &'static Scenario {
        in_module("live", function, options)
    }

    fn in_module(
        module_path: &'static str,
        function: &'static str,
        options: ScenarioOptions,
    ) -> &'static Scenario {
        Box::leak(Box::new(Scenario {
            module_path,
            function,
            file: "order.rs",
            line: 1,
            manifest_dir: "/m",
            snapshot_assertion: crate::__snapshot_assertion!(),
            options,
            body,
        }))
    }

    #[test]
    fn fixture_first_then_own_servers_then_shared_each_in_name_order() {
        let shared = ScenarioOptions {
            isolation: Some(Isolation::Shared),
            ..ScenarioOptions::DEFAULT
        };
        let own = ScenarioOptions {
            isolation: Some(Isolation::Server),
            ..ScenarioOptions::DEFAULT
        };
        let fixture = ScenarioOptions {
            agent: AgentKind::Fixture,
            ..ScenarioOptions::DEFAULT
        };
        let all = vec![
            scenario("a_shared", shared),
            scenario("b_own", own),
            scenario("c_fixture", fixture),
            scenario("d_shared", shared),
            scenario("e_own", own),
            scenario("f_fixture", fixture),
        ];
        let names =
            |list: Vec<&'static Scenario>| list.iter().map(|s| s.function).collect::<Vec<_>>();
        let run = Arguments::from_iter(["live"]);
        assert_eq!(
            names(schedule(all.clone(), &run)),
            [
                "c_fixture",
                "f_fixture",
                "b_own",
                "e_own",
                "a_shared",
                "d_shared"
            ]
        );
        let list = Arguments::from_iter(["live", "--list"]);
        assert_eq!(
            names(schedule(all, &list)),
            [
                "a_shared",
                "b_own",
                "c_fixture",
                "d_shared",
                "e_own",
                "f_fixture"
            ]
        );
    }

    #[test]
    fn live_scenarios_beyond_the_cap_start_after_every_other() {
        let all: Vec<&'static Scenario> = ["live_a", "x", "live_b", "y", "live_c", "z"]
            .into_iter()
            .map(|f| scenario(f, ScenarioOptions::DEFAULT))
            .collect();
        let live = |s: &Scenario| s.function.starts_with("live_");
        let order = |cap| -> Vec<&str> {
            live_beyond_the_cap_last(all.clone(), cap, live)
                .iter()
                .map(|s| s.function)
                .collect()
        };
        assert_eq!(order(1), ["live_a", "x", "y", "z", "live_b", "live_c"]);
        assert_eq!(order(2), ["live_a", "x", "live_b", "y", "z", "live_c"]);
        assert_eq!(order(3), ["live_a", "x", "live_b", "y", "live_c", "z"]);
    }

    #[test]
    fn own_server_scenarios_start_with_the_module_that_has_most_of_them() {
        let own = ScenarioOptions {
            isolation: Some(Isolation::Server),
            ..ScenarioOptions::DEFAULT
        };
        let all = vec![
            in_module("live::gates", "restart", own),
            in_module("live::provisioning", "pair_left", own),
            in_module("live::provisioning", "pair_right", own),
            in_module("live::tools", "detached", own),
        ];
        let order: Vec<&str> = schedule(all, &Arguments::from_iter(["live"]))
            .iter()
            .map(|s| s.function)
            .collect();
        assert_eq!(order, ["pair_left", "pair_right", "restart", "detached"]);
    }
}
