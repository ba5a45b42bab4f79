//! What `processes` and `soak` check after a whole run of the scenario binary, and how they
//! report: the processes of the run are gone, the roots left match the results, one runner
//! loads the machine at a time, and figures are printed as one line.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use harness_runtime::scaled;

use harness_selftest::run::Finished;
use harness_selftest::sandbox::Sandbox;

/// One runner at a time: these runs load the machine, and their timings are figures.
static SERIAL: Mutex<()> = Mutex::new(());

/// How many scenarios a runner runs at once.
pub(crate) const THREADS: &str = "4";
/// How long the reaper may take to sweep after the runner died, before scaling.
pub(crate) const REAP_CEILING: Duration = Duration::from_secs(10);

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Prints a test's figures as one line.
pub(crate) fn figures(test: &str, figures: &[(&str, String)]) {
    let text: Vec<String> = figures.iter().map(|(k, v)| format!("{k}={v}")).collect();
    println!("[figures] {test}: {}", text.join(", "));
}

/// `live-<scenario, sanitized>-<runner pid>-<nonce>` → the sanitized scenario.
fn root_scenario(root: &str) -> Option<&str> {
    let rest = root.strip_prefix("live-")?;
    let mut parts = rest.rsplitn(3, '-');
    let (_nonce, _pid) = (parts.next()?, parts.next()?);
    parts.next()
}

/// `reliability::mix::s00_pass` → `reliability-mix-s00_pass`, as roots name it.
fn sanitized(name: &str) -> String {
    name.replace("::", "-")
}

/// What the roots of a run say.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    /// Roots kept by scenarios reported failed.
    pub(crate) kept: usize,
    /// Roots of scenarios in flight when the runner died.
    pub(crate) in_flight: usize,
}

/// Checks the roots against the reported results: none of a passing scenario, at least one of
/// every failing one (its path printed), the rest only of scenarios still in flight.
pub(crate) fn check_roots(sandbox: &Sandbox, finished: &Finished) -> Roots {
    let results = finished.results();
    let by_root: BTreeMap<String, &String> =
        results.keys().map(|name| (sanitized(name), name)).collect();
    let mut roots = Roots::default();
    let mut kept_by = BTreeMap::<String, usize>::new();
    for root in sandbox.roots() {
        let scenario = root_scenario(&root)
            .unwrap_or_else(|| panic!("{root} in the run's TMPDIR is no scenario root"));
        match by_root.get(scenario).map(|name| results[*name].as_str()) {
            Some("ok") => panic!("the passing scenario of {root} left its root\n{finished}"),
            Some("FAILED") => {
                assert!(
                    finished.stderr.contains("kept scenario root: ")
                        && finished.stderr.contains(&root),
                    "the kept root {root} was not printed\n{finished}"
                );
                *kept_by.entry(scenario.to_string()).or_default() += 1;
                roots.kept += 1;
            }
            Some(other) => panic!("{root} belongs to a scenario reported {other:?}"),
            None => {
                let started = finished.started();
                assert!(
                    started.iter().any(|name| sanitized(name) == scenario),
                    "{root} belongs to no scenario that started\n{finished}"
                );
                roots.in_flight += 1;
            }
        }
    }
    for (name, outcome) in &results {
        if outcome == "FAILED" {
            assert!(
                kept_by.contains_key(&sanitized(name)),
                "the failing {name} kept no root: {:?}\n{finished}",
                sandbox.roots()
            );
        }
    }
    roots
}

/// Waits until nothing of the run is left, then checks every recorded pid is gone.
pub(crate) fn assert_clean(sandbox: &Sandbox, finished: &Finished) -> Duration {
    let took = match sandbox.wait_until_clean(finished, scaled(REAP_CEILING)) {
        Ok(took) => took,
        Err(left) => panic!(
            "processes of the run remain {:?} after the runner ended:\n{}\n{finished}",
            scaled(REAP_CEILING),
            left.join("\n")
        ),
    };
    let running = sandbox.recorded_still_running();
    assert!(running.is_empty(), "still running: {running:?}");
    took
}

/// How many of `results` ended in `outcome`.
pub(crate) fn count(results: &BTreeMap<String, String>, outcome: &str) -> usize {
    results.values().filter(|o| o.as_str() == outcome).count()
}
