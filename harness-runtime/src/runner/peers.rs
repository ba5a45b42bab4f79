//! Scenarios that meet a peer inside one runner process (`needs_peer = "other_fn"`): whether the
//! peer can be there is known before any trial, so none waits for a peer that cannot come.
//!
//! Under nextest's process per test it never can: such a scenario is listed ignored there (nextest
//! then reports it skipped) and, run anyway (`--run-ignored`), skips at once. Under `cargo test`
//! it is listed as before; it skips at once only when its peer is not in the run (the filters
//! leave it out) or cannot run beside it (`--test-threads 1`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use super::cli::Cli;
use super::descriptor::Scenario;
use crate::progress::progress;
use crate::settings;

/// A `needs_peer` naming a function that is not a registered scenario of the same module.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}",
    unknown.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
)]
pub(crate) struct UnknownPeers {
    unknown: Vec<UnknownPeer>,
}

/// One scenario whose peer is not a scenario.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{scenario}` ({place}) has needs_peer = \"{function}\", but `{peer}` is not a scenario: \
     mark `{function}` with #[live_agent_test] or name another scenario of the same module"
)]
struct UnknownPeer {
    scenario: String,
    place: String,
    function: String,
    peer: String,
}

/// The full name of `scenario`'s peer (`<module>::<peer fn>`), if it needs one.
pub(crate) fn peer_of(scenario: &Scenario) -> Option<String> {
    let function = scenario.options.needs_peer?;
    let name = scenario.name();
    Some(match name.rsplit_once("::") {
        Some((module, _)) => format!("{module}::{function}"),
        None => function.to_owned(),
    })
}

/// Fails on a `needs_peer` that names no registered scenario (the attribute checked that the
/// function exists; a plain function is found only here).
pub(crate) fn check(scenarios: &[&Scenario]) -> Result<(), UnknownPeers> {
    let unknown: Vec<UnknownPeer> = scenarios
        .iter()
        .filter_map(|scenario| {
            let peer = peer_of(scenario)?;
            let known = scenarios.iter().any(|other| other.name() == peer);
            (!known).then(|| UnknownPeer {
                scenario: scenario.name(),
                place: format!("{}:{}", scenario.file, scenario.line),
                function: scenario.options.needs_peer.unwrap_or_default().to_owned(),
                peer,
            })
        })
        .collect();
    if unknown.is_empty() {
        Ok(())
    } else {
        Err(UnknownPeers { unknown })
    }
}

/// Why `scenario` cannot meet its peer in this process, or `None` when it can (or needs none).
///
/// `process_per_test`: nextest's `NEXTEST_EXECUTION_MODE=process-per-test`; `selects`: whether the
/// command line's filters keep a name; `one_thread`: `--test-threads 1`.
pub(crate) fn absence(
    scenario: &Scenario,
    process_per_test: bool,
    selects: impl Fn(&str) -> bool,
    one_thread: bool,
) -> Option<String> {
    let peer = peer_of(scenario)?;
    let needs = format!("needs its peer scenario `{peer}` running in the same process");
    if process_per_test {
        return Some(format!(
            "{needs}, and nextest runs every test in a process of its own; run it with \
             `cargo test`"
        ));
    }
    if !selects(&peer) {
        return Some(format!(
            "{needs}, and the filters leave `{peer}` out of this run"
        ));
    }
    if one_thread {
        return Some(format!(
            "{needs}, and --test-threads 1 runs one scenario at a time"
        ));
    }
    None
}

/// Each scenario that cannot meet its peer in this run, with why; decided once, before any
/// trial, by [`decide`].
static ABSENT: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// Decides, for the whole run, which scenarios cannot meet their peers. When listing under
/// nextest, says on stderr why those it lists ignored are (nextest reads only stdout).
pub(crate) fn decide(scenarios: &[&Scenario], cli: &Cli) {
    let process_per_test = settings::nextest_process_per_test();
    let one_thread = cli.args().test_threads == Some(1);
    let absent: BTreeMap<String, String> = scenarios
        .iter()
        .filter_map(|scenario| {
            let reason = absence(scenario, process_per_test, |n| cli.selects(n), one_thread)?;
            Some((scenario.name(), reason))
        })
        .collect();
    if cli.args().list && process_per_test {
        for (name, reason) in &absent {
            progress(name, &format!("listed ignored: {reason}"));
        }
    }
    let _ = ABSENT.set(absent);
}

/// Why `name` cannot meet its peer in this run, if it cannot.
pub(crate) fn absent(name: &str) -> Option<&'static str> {
    ABSENT.get()?.get(name).map(String::as_str)
}

/// Whether `scenario` is listed ignored: it needs a peer and this is nextest's process per test.
pub(crate) fn listed_ignored(scenario: &Scenario) -> bool {
    scenario.options.needs_peer.is_some() && settings::nextest_process_per_test()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::__private::ScenarioFuture;
    use crate::Live;
    use crate::scenario::ScenarioOptions;

    fn body(_: &mut Live) -> ScenarioFuture<'_> {
        Box::pin(async { Ok(()) })
    }

    fn scenario(function: &'static str, needs_peer: Option<&'static str>) -> Scenario {
        Scenario {
            module_path: "suite::provisioning",
            function,
            file: "tests/live/provisioning.rs",
            line: 7,
            manifest_dir: "/m",
            snapshot_assertion: crate::__snapshot_assertion!(),
            options: ScenarioOptions {
                needs_peer,
                ..ScenarioOptions::DEFAULT
            },
            body,
        }
    }

    #[test]
    fn the_peer_is_named_in_the_scenarios_module() {
        let left = scenario("left", Some("right"));
        assert_eq!(peer_of(&left).as_deref(), Some("provisioning::right"));
        assert_eq!(peer_of(&scenario("alone", None)), None);
    }

    #[test]
    fn a_peer_that_is_no_scenario_is_an_error_naming_both() {
        let left = scenario("left", Some("right"));
        let right = scenario("right", Some("left"));
        assert_eq!(check(&[&left, &right]), Ok(()));
        let error = check(&[&left]).unwrap_err().to_string();
        assert_eq!(
            error,
            "`provisioning::left` (tests/live/provisioning.rs:7) has needs_peer = \"right\", but \
             `provisioning::right` is not a scenario: mark `right` with #[live_agent_test] or \
             name another scenario of the same module"
        );
    }

    #[test]
    fn a_peer_is_absent_under_nextest_when_filtered_out_or_on_one_thread() {
        let left = scenario("left", Some("right"));
        let all = |_: &str| true;
        assert_eq!(absence(&left, false, all, false), None);
        let nextest = absence(&left, true, all, false).unwrap();
        assert!(
            nextest.ends_with(
                "nextest runs every test in a process of its own; run it with `cargo test`"
            ),
            "{nextest}"
        );
        let filtered = absence(&left, false, |n| n != "provisioning::right", false).unwrap();
        assert!(
            filtered.ends_with("the filters leave `provisioning::right` out of this run"),
            "{filtered}"
        );
        let alone = absence(&left, false, all, true).unwrap();
        assert!(alone.ends_with("--test-threads 1 runs one scenario at a time"));
        assert!(alone.starts_with(
            "needs its peer scenario `provisioning::right` running in the same process"
        ));
        // A scenario without a peer is never held back.
        assert_eq!(absence(&scenario("alone", None), true, all, true), None);
    }
}
