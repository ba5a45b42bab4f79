//! A long run does not grow. One runner runs 1,000 fixture scenarios and 50 on real OpenCode
//! (`src/bin/selftest-scenarios/reliability/soak.rs`: each starts its agent, makes a session
//! and prompts once through the agent's forwarder, as a product would, and checks the reply),
//! 4 at a time. Its open file descriptors, threads and resident set are sampled every 100
//! finished scenarios (every 10 through the OpenCode ones), the last after all of them while a
//! held scenario keeps the runner alive; after the warm-up each stays within the bounds
//! `soak_samples` states and defends. And, as after every whole run (`processes`): 0 processes
//! of the run and 0 roots remain.

use std::time::{Duration, Instant};

use harness_runtime::scaled;

use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::sandbox::Sandbox;
use harness_selftest::{scratch, test};

use crate::SCENARIOS;
use crate::run_checks::{THREADS, assert_clean, check_roots, count, figures, serial};
use crate::soak_samples::{self, Sample, mib};

/// The soak scenarios of the scenario binary.
const FILTER: &str = "reliability::soak::";
/// The one that waits for the last sample.
const HELD: &str = "reliability::soak::z_held_for_the_last_sample";
/// How many soak scenarios run on the fixture agent, and on real OpenCode.
const FIXTURE: usize = 1_000;
const OPENCODE: usize = 50;

/// The ceiling of the whole run, before scaling (~5 minutes here).
const RUN_CEILING: Duration = Duration::from_secs(30 * 60);

/// `warm/highest after it/last/bound` of one figure.
fn span(samples: &[Sample], figure: impl Fn(&Sample) -> u64, bound: u64) -> [u64; 4] {
    let warm = samples
        .iter()
        .filter(|s| s.point <= soak_samples::WARM_UP)
        .map(&figure)
        .max()
        .unwrap_or(0);
    let after = samples
        .iter()
        .filter(|s| s.point > soak_samples::WARM_UP)
        .map(&figure)
        .max()
        .unwrap_or(0);
    let last = samples.last().map(&figure).unwrap_or(0);
    [warm, after, last, bound]
}

/// 1,050 scenarios in one runner: every one passes, nothing is left, nothing grows.
fn heavy_a_thousand_and_fifty_scenarios_in_one_runner_do_not_grow() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(SCENARIOS, &["--test-threads", THREADS, FILTER]);
    command.envs([("RELIABILITY_SOAK", "1"), ("RELIABILITY_OPENCODE", "1")]);
    let started = Instant::now();
    let ceiling = scaled(RUN_CEILING);
    let mut running = sandbox.start(command);
    let points = soak_samples::sample_points(FIXTURE, OPENCODE);
    let samples = soak_samples::take(&mut running, &points, started, ceiling);
    scratch::release(sandbox.scratch.path());
    let finished = running.wait(ceiling.saturating_sub(started.elapsed()));
    let clean = assert_clean(&sandbox, &finished);

    let results = finished.results();
    assert_eq!(results.len(), FIXTURE + OPENCODE + 1, "\n{finished}");
    assert_eq!(count(&results, "ok"), results.len(), "\n{finished}");
    assert_eq!(finished.code, Some(0), "\n{finished}");
    finished.assert_result(HELD, "ok");
    let roots = check_roots(&sandbox, &finished);
    assert_eq!((roots.kept, roots.in_flight), (0, 0), "\n{finished}");
    assert!(sandbox.roots().is_empty(), "{:?}", sandbox.roots());
    // Every scenario started the agent it was meant to, and recorded it.
    assert_eq!(sandbox.count("agent"), FIXTURE, "{:?}", sandbox.pids());
    assert_eq!(sandbox.count("server"), OPENCODE, "{:?}", sandbox.pids());

    let bound = soak_samples::bounds(soak_samples::warm_up(&samples));
    let [fds, threads] = [
        span(&samples, |s| s.usage.fds as u64, bound.fds as u64),
        span(&samples, |s| s.usage.threads as u64, bound.threads as u64),
    ]
    .map(|[warm, after, last, bound]| format!("{warm}/{after}/{last}/{bound}"));
    let rss = span(&samples, |s| s.usage.rss_kib, bound.rss_kib).map(mib);
    figures(
        "heavy_soak",
        &[
            ("scenarios", results.len().to_string()),
            ("passed", count(&results, "ok").to_string()),
            ("fixture agents", sandbox.count("agent").to_string()),
            ("opencode servers", sandbox.count("server").to_string()),
            ("samples", samples.len().to_string()),
            ("fds warm/max after/last/bound", fds),
            ("threads warm/max after/last/bound", threads),
            ("rss warm/max after/last/bound", rss.join("/")),
            ("survivors", "0".into()),
            ("roots left", "0".into()),
            ("wall", format!("{:.1}s", finished.elapsed.as_secs_f64())),
            ("clean after exit", format!("{clean:.2?}")),
        ],
    );
    let over = soak_samples::over_bounds(&samples);
    assert!(
        over.is_empty(),
        "the runner grew past its bounds {bound:?}:\n{}",
        over.join("\n")
    );
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(heavy_a_thousand_and_fifty_scenarios_in_one_runner_do_not_grow)
            .ignore("heavy: 1,050 scenarios in one runner, 50 on real OpenCode; minutes")
            .needs(OpenCode),
    ]
}
