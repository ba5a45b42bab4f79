//! What `processes` and `soak` check after a whole run of the scenario binary, and how they
//! report: the processes of the run are gone, the roots left match the results (a shared
//! server's root those of the scenarios that leased it), one runner loads the machine at a
//! time, and figures are printed as one line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use harness_runtime::scaled;

use harness_selftest::prerequisites::Test;
use harness_selftest::run::Finished;
use harness_selftest::sandbox::Sandbox;
use harness_selftest::test;

/// One runner at a time: these runs load the machine, and their timings are figures.
static SERIAL: Mutex<()> = Mutex::new(());

/// How many scenarios a runner runs at once where they start real OpenCode (the soak's, the
/// heavy runs'): each server takes a share of two cores.
pub(crate) const THREADS: &str = "4";
/// How many fixture scenarios a runner runs at once: they mostly wait (their ceilings, the stop
/// grace of agents deaf to SIGTERM), so at four the hundred took 40 s of a mostly idle machine.
pub(crate) const FIXTURE_THREADS: &str = "8";
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

/// `live-<scenario, sanitized>-<runner pid>-<nonce>` → the sanitized scenario and the pid.
fn root_parts(root: &str) -> Option<(&str, &str)> {
    let rest = root.strip_prefix("live-")?;
    let mut parts = rest.rsplitn(3, '-');
    let (_nonce, pid) = (parts.next()?, parts.next()?);
    Some((parts.next()?, pid))
}

/// `live-<scenario, sanitized>-<runner pid>-<nonce>` → the sanitized scenario.
fn root_scenario(root: &str) -> Option<&str> {
    root_parts(root).map(|(scenario, _)| scenario)
}

/// `reliability::mix::s00_pass` → `reliability-mix-s00_pass`, as roots name it.
fn sanitized(name: &str) -> String {
    name.replace("::", "-")
}

/// The shared servers' pool directory (`live-shared-pool-<runner pid>-<nonce>`): the roots of
/// its servers and of the scenarios that leased them are in it.
const POOL: &str = "shared-pool";
/// A shared server's root in the pool (`live-shared-server-<runner pid>-<nonce>`).
const SERVER: &str = "shared-server";
/// A warm workspace's root in the pool (`live-seat-<runner pid>-<nonce>`): the pool's, not a
/// scenario's; a failing lessee that kept it is named in its [`LEASED_BY`].
const SEAT: &str = "seat";
/// The file in a shared server's root naming the scenarios that leased it, one a line in lease
/// order (the runtime writes it at each lease).
const LEASED_BY: &str = "leased-by";

/// What the roots of a run say.
#[derive(Debug, Default)]
pub(crate) struct Roots {
    /// Roots kept by scenarios reported failed.
    pub(crate) kept: usize,
    /// Roots of scenarios in flight when the runner died.
    pub(crate) in_flight: usize,
    /// Roots of shared servers kept because a scenario (one or more of those that leased each)
    /// failed on them.
    pub(crate) servers_kept: usize,
    /// Roots of shared servers left by a runner that died before it stopped its pool.
    pub(crate) servers_left: usize,
    /// Warm workspaces (the pool's, leased by no failure) left by a runner that died before it
    /// stopped its pool.
    pub(crate) seats_left: usize,
}

/// `Err(why)` unless `cond`.
macro_rules! ensure {
    ($cond:expr, $($why:tt)+) => {
        if !$cond {
            return Err(format!($($why)+));
        }
    };
}

/// Checks the roots against the reported results: none of a passing scenario, at least one of
/// every failing one (its path printed), the rest only of scenarios still in flight. A shared
/// server's root is the scenarios' that leased it (several at once): after a whole run it is kept
/// only when one of them failed (its path printed), and every failing scenario that leased one
/// is named by a kept one;
/// a runner that died leaves its pool's servers' roots, whoever leased them. A root nobody of
/// the run owns fails the check.
pub(crate) fn check_roots(sandbox: &Sandbox, finished: &Finished) -> Roots {
    roots_of(sandbox.tmp.path(), finished)
        .unwrap_or_else(|why| panic!("{why}\nroots: {:?}\n{finished}", sandbox.roots()))
}

/// [`check_roots`] of the run's `TMPDIR`, `tmp`.
fn roots_of(tmp: &Path, finished: &Finished) -> Result<Roots, String> {
    let mut check = RootCheck {
        finished,
        results: finished.results(),
        started: finished.started(),
        roots: Roots::default(),
        kept_by: BTreeSet::new(),
        leased: BTreeSet::new(),
        failed_on_kept: BTreeSet::new(),
    };
    for root in entries(tmp)? {
        if root_scenario(&root) == Some(POOL) {
            check.pool(&tmp.join(&root), &root)?;
        } else {
            check.scenario_root(&root, false)?;
        }
    }
    check.every_failure_kept()?;
    Ok(check.roots)
}

/// The names in `dir`, sorted.
fn entries(dir: &Path) -> Result<Vec<String>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("read {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| format!("read {}: {e}", dir.display()))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    Ok(names)
}

/// The state of one [`check_roots`].
struct RootCheck<'a> {
    finished: &'a Finished,
    results: BTreeMap<String, String>,
    started: Vec<String>,
    roots: Roots,
    /// Sanitized scenarios that kept a root.
    kept_by: BTreeSet<String>,
    /// Sanitized scenarios whose roots are in the pool: they leased a shared server.
    leased: BTreeSet<String>,
    /// Scenarios that failed on a shared server whose root was kept.
    failed_on_kept: BTreeSet<String>,
}

impl RootCheck<'_> {
    /// Whether the runner ended on its own (then it stopped its pool and decided every root).
    fn whole_run(&self) -> bool {
        self.finished.signal.is_none()
    }

    fn scenario_root(&mut self, root: &str, in_pool: bool) -> Result<(), String> {
        let Some(scenario) = root_scenario(root) else {
            return Err(format!("{root} in the run's TMPDIR is no scenario root"));
        };
        if in_pool {
            self.leased.insert(scenario.to_string());
        }
        let outcome = self
            .results
            .iter()
            .find(|(name, _)| sanitized(name) == scenario)
            .map(|(_, outcome)| outcome.as_str());
        match outcome {
            Some("ok") => Err(format!("the passing scenario of {root} left its root")),
            Some("FAILED") => {
                ensure!(
                    printed(self.finished, "kept scenario root: ", root),
                    "the kept root {root} was not printed"
                );
                self.kept_by.insert(scenario.to_string());
                self.roots.kept += 1;
                Ok(())
            }
            Some(other) => Err(format!("{root} belongs to a scenario reported {other:?}")),
            None => {
                ensure!(
                    self.started.iter().any(|name| sanitized(name) == scenario),
                    "{root} belongs to no scenario that started"
                );
                self.roots.in_flight += 1;
                Ok(())
            }
        }
    }

    /// The pool's directory: the runner's own, holding only server and scenario roots.
    fn pool(&mut self, dir: &Path, name: &str) -> Result<(), String> {
        let runner = self.finished.runner.to_string();
        ensure!(
            root_parts(name).is_some_and(|(_, pid)| pid == runner),
            "{name} is not the pool of the runner (pid {runner})"
        );
        let entries = entries(dir)?;
        ensure!(
            !entries.is_empty(),
            "the empty pool directory {name} was left"
        );
        for entry in entries {
            if root_scenario(&entry) == Some(SERVER) {
                self.server_root(&dir.join(&entry), &entry)?;
            } else if root_scenario(&entry) == Some(SEAT) {
                self.seat_root(&dir.join(&entry), &entry)?;
            } else {
                self.scenario_root(&entry, true)?;
            }
        }
        Ok(())
    }

    /// A warm workspace's root: kept as the evidence of the failing scenario its [`LEASED_BY`]
    /// names (its path printed), or left with the pool by a runner that died (kept, then, by
    /// a scenario still in flight, or by nobody).
    fn seat_root(&mut self, path: &Path, root: &str) -> Result<(), String> {
        let file = path.join(LEASED_BY);
        let lessee = match std::fs::read_to_string(&file) {
            Ok(text) => text.lines().last().map(str::to_string),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(format!("read {}: {e}", file.display())),
        };
        let Some(lessee) = lessee else {
            ensure!(
                !self.whole_run(),
                "the warm workspace {root} was left after a whole run, kept by no failure"
            );
            self.roots.seats_left += 1;
            return Ok(());
        };
        let in_flight = !self.results.contains_key(&lessee)
            && self.started.contains(&lessee)
            && !self.whole_run();
        if in_flight {
            // It failed and kept the seat, and the runner died before it reported: the seat is
            // evidence of a scenario in flight, as its own root is.
            self.leased.insert(sanitized(&lessee));
            self.roots.in_flight += 1;
            return Ok(());
        }
        ensure!(
            self.results.get(&lessee).is_some_and(|o| o == "FAILED"),
            "the warm workspace {root} was kept for {lessee}, which did not fail"
        );
        ensure!(
            printed(self.finished, "kept scenario root: ", root),
            "the kept root {root} was not printed"
        );
        self.kept_by.insert(sanitized(&lessee));
        self.leased.insert(sanitized(&lessee));
        self.roots.kept += 1;
        Ok(())
    }

    /// A shared server's root, owned by the scenarios its [`LEASED_BY`] names.
    fn server_root(&mut self, path: &Path, root: &str) -> Result<(), String> {
        let file = path.join(LEASED_BY);
        let lessees: Vec<String> = match std::fs::read_to_string(&file) {
            Ok(text) => text.lines().map(str::to_string).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(format!("read {}: {e}", file.display())),
        };
        for lessee in &lessees {
            ensure!(
                self.started.contains(lessee),
                "the shared server root {root} was leased by {lessee}, which never started"
            );
        }
        if !self.whole_run() {
            self.roots.servers_left += 1;
            return Ok(());
        }
        // Several scenarios lease a server at once: it is kept when any of them failed on it,
        // and names every one that did.
        let failed: Vec<&String> = lessees
            .iter()
            .filter(|name| self.results.get(*name).is_some_and(|o| o == "FAILED"))
            .collect();
        ensure!(
            !failed.is_empty(),
            "the shared server root {root} was kept, but no scenario failed on it (leased by \
             {lessees:?})"
        );
        ensure!(
            printed(self.finished, "kept shared server root: ", root),
            "the kept shared server root {root} was not printed"
        );
        self.failed_on_kept.extend(failed.into_iter().cloned());
        self.roots.servers_kept += 1;
        Ok(())
    }

    /// Every failing scenario kept its root; after a whole run, every failing one that leased a
    /// shared server kept the server's root too.
    fn every_failure_kept(&self) -> Result<(), String> {
        for (name, outcome) in &self.results {
            if outcome != "FAILED" {
                continue;
            }
            let scenario = sanitized(name);
            ensure!(
                self.kept_by.contains(&scenario),
                "the failing {name} kept no root"
            );
            ensure!(
                !self.whole_run()
                    || !self.leased.contains(&scenario)
                    || self.failed_on_kept.contains(name),
                "the failing {name} leased a shared server whose root was not kept"
            );
        }
        Ok(())
    }
}

/// Whether a line of the runner's stderr says `prefix` and names `root`.
fn printed(finished: &Finished, prefix: &str, root: &str) -> bool {
    finished
        .stderr
        .lines()
        .any(|line| line.contains(prefix) && line.contains(root))
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

/// The runner's pid in the made-up runs below.
const RUNNER: u32 = 4242;

/// A made-up run for the check: `results` reported, `in_flight` only started, `stderr` besides
/// the progress lines, ended by `signal` (`None`: on its own).
fn made_up(
    results: &[(&str, &str)],
    in_flight: &[&str],
    stderr: &[String],
    signal: Option<i32>,
) -> Finished {
    let started = results
        .iter()
        .map(|(name, _)| *name)
        .chain(in_flight.iter().copied());
    let mut err: Vec<String> = started
        .map(|name| format!("[live] {name}: started"))
        .collect();
    err.extend(stderr.iter().cloned());
    Finished {
        code: signal.is_none().then_some(101),
        signal,
        stdout: results
            .iter()
            .map(|(name, outcome)| format!("test {name} ... {outcome}\n"))
            .collect(),
        stderr: err.join("\n"),
        elapsed: std::time::Duration::ZERO,
        runner: RUNNER,
        seen: Default::default(),
        peak: 0,
    }
}

/// A made-up `TMPDIR`: `dirs` (relative paths) made, and each `(server root, lessees)` given a
/// `leased-by` naming them (none: no file).
fn made_up_tmp(dirs: &[&str], leases: &[(&str, &[&str])]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("a temp dir");
    for dir in dirs {
        std::fs::create_dir_all(tmp.path().join(dir)).expect("a made-up root");
    }
    for (server, lessees) in leases {
        let text: String = lessees.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(tmp.path().join(server).join(LEASED_BY), text).expect("leased-by");
    }
    tmp
}

/// A shared server's kept root belongs to the scenarios that leased it: the check passes when
/// one of them failed, whichever leased it last (or the runner died), and fails on a pool root
/// nobody of the run owns, on one only passing scenarios leased, and on a failing lease whose
/// server root is gone.
fn a_kept_pool_root_belongs_to_the_scenarios_that_leased_it() {
    let pool = format!("live-shared-pool-{RUNNER}-aa");
    let server = format!("{pool}/live-shared-server-{RUNNER}-bb");
    let failing = format!("{pool}/live-t-fails-{RUNNER}-cc");
    let kept = [
        format!("kept scenario root: /tmp/{failing}"),
        format!("kept shared server root: /tmp/{server}"),
    ];
    let results = [("t::passes", "ok"), ("t::fails", "FAILED")];
    let whole = made_up(&results, &[], &kept, None);
    let check = |dirs: &[&str], leases: &[(&str, &[&str])], finished: &Finished| {
        let tmp = made_up_tmp(dirs, leases);
        roots_of(tmp.path(), finished)
    };
    let both: &[&str] = &[&failing, &server];

    let roots = check(both, &[(&server, &["t::passes", "t::fails"])], &whole)
        .expect("a server root its failing lessee kept");
    assert_eq!((roots.kept, roots.servers_kept), (1, 1), "{roots:?}");
    // Lessees share a server: a neighbour that passed may be the last to lease it.
    let roots = check(both, &[(&server, &["t::fails", "t::passes"])], &whole)
        .expect("a server root its failing lessee kept, a passing neighbour leased last");
    assert_eq!((roots.kept, roots.servers_kept), (1, 1), "{roots:?}");

    let refused = [
        (
            check(both, &[(&server, &["t::passes"])], &whole),
            "no scenario failed on it",
        ),
        (check(both, &[], &whole), "no scenario failed on it"),
        (
            check(both, &[(&server, &["t::stranger"])], &whole),
            "which never started",
        ),
        (check(&[&failing], &[], &whole), "whose root was not kept"),
        (
            check(&["live-shared-pool-1-aa/live-t-fails-1-cc"], &[], &whole),
            "is not the pool of the runner",
        ),
        (
            check(&[&failing, &format!("{pool}/stray")], &[], &whole),
            "is no scenario root",
        ),
        (
            check(
                both,
                &[(&server, &["t::fails"])],
                &made_up(&results, &[], &kept[..1], None),
            ),
            "was not printed",
        ),
    ];
    for (result, why) in refused {
        let err = result.expect_err(why);
        assert!(err.contains(why), "{why:?} not in {err:?}");
    }

    // A runner that died stopped no server: their roots stay, whoever leased them, as long as
    // every lessee is of the run.
    let killed = made_up(&results, &["t::running"], &kept[..1], Some(9));
    let in_flight = format!("{pool}/live-t-running-{RUNNER}-dd");
    let dirs: &[&str] = &[&failing, &server, &in_flight];
    let roots = check(dirs, &[(&server, &["t::running"])], &killed).expect("a dead runner's pool");
    assert_eq!(
        (roots.kept, roots.in_flight, roots.servers_left),
        (1, 1, 1),
        "{roots:?}"
    );
    check(dirs, &[], &killed).expect("a server nobody leased yet");

    // A scenario that failed on a warm workspace and kept it, when the runner died before it
    // reported: in flight. After a whole run, or for a scenario that never started, refused.
    let seat = format!("{pool}/live-seat-{RUNNER}-ee");
    let with_seat: &[&str] = &[&failing, &server, &seat];
    let roots = check(with_seat, &[(&seat, &["t::running"])], &killed)
        .expect("a seat kept by a scenario in flight");
    assert_eq!((roots.kept, roots.in_flight), (1, 1), "{roots:?}");
    let err = check(with_seat, &[(&seat, &["t::stranger"])], &killed).expect_err("a stranger");
    assert!(err.contains("which did not fail"), "{err}");
    let err = check(with_seat, &[(&seat, &["t::passes"])], &killed).expect_err("a pass");
    assert!(err.contains("which did not fail"), "{err}");
    let ended = made_up(&results, &["t::running"], &kept[..1], None);
    let err =
        check(&[&failing, &seat], &[(&seat, &["t::running"])], &ended).expect_err("a whole run");
    assert!(err.contains("which did not fail"), "{err}");
    let err = check(dirs, &[(&server, &["t::stranger"])], &killed).expect_err("a stranger");
    assert!(err.contains("which never started"), "{err}");
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![test!(
        a_kept_pool_root_belongs_to_the_scenarios_that_leased_it
    )]
}
