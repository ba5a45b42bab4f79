//! Issue #21, item 3: a long run does not grow. One runner runs 1,000 fixture scenarios and 50
//! on real OpenCode (`src/bin/selftest-scenarios/reliability/soak.rs`: each starts its agent,
//! makes a session, prompts once and checks the reply), 4 at a time, and its open file
//! descriptors, threads and resident set are sampled every 100 finished scenarios, and once
//! more after the last one (while the held scenario keeps the runner alive).
//!
//! The samples of a runner 4 scenarios into its work differ by what those 4 hold at that moment;
//! the bounds are that spread, not a growth. Against the sample after the warm-up (200
//! scenarios: the allocator's arenas and the runtime's pools are made by then), every later one
//! must stay:
//! - file descriptors: within +[`FD_SLACK`]: a leak of one per 50 scenarios would exceed it by
//!   the end;
//! - threads: within +[`THREAD_SLACK`]: a leaked thread per 100 scenarios would exceed it;
//! - resident set: within +[`RSS_SLACK_PERCENT`]% and +[`RSS_SLACK_MIB`] MiB: a run that kept
//!   a few KiB per scenario (a session's events, a log) would exceed it.
//!
//! And like every whole run (`processes`): 0 processes of the run and 0 roots of passing
//! scenarios remain at the end.

use std::time::{Duration, Instant};

use harness_runtime::scaled;

use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::procs::{self, Usage};
use harness_selftest::run::Running;
use harness_selftest::sandbox::Sandbox;
use harness_selftest::{scratch, test};

use crate::SCENARIOS;
use crate::run_checks::{THREADS, assert_clean, check_roots, count, figures, serial};

/// The soak scenarios of the scenario binary.
const FILTER: &str = "reliability::soak::";
/// The one that waits for the last sample.
const HELD: &str = "reliability::soak::z_held_for_the_last_sample";
/// How many soak scenarios run on the fixture agent, and on real OpenCode.
const FIXTURE: usize = 1_000;
const OPENCODE: usize = 50;
/// A sample every so many finished scenarios.
const EVERY: usize = 100;
/// The sample every later one is held to.
const WARM_UP: usize = 200;

/// File descriptors a sample may hold beyond the warm-up sample.
const FD_SLACK: usize = 16;
/// Threads a sample may run beyond the warm-up sample.
const THREAD_SLACK: usize = 8;
/// Resident-set growth allowed over the warm-up sample: this percentage of it, plus…
const RSS_SLACK_PERCENT: u64 = 25;
/// …this many MiB.
const RSS_SLACK_MIB: u64 = 8;

/// The ceiling of the whole run, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(45 * 60);

/// The runner's usage after `finished` scenarios.
#[derive(Clone, Copy, Debug)]
struct Sample {
    finished: usize,
    usage: Usage,
    wall: Duration,
}

/// When to sample: every [`EVERY`] finished scenarios, and after the last.
fn sample_points() -> Vec<usize> {
    let total = FIXTURE + OPENCODE;
    let mut points: Vec<usize> = (EVERY..=total).step_by(EVERY).collect();
    if points.last() != Some(&total) {
        points.push(total);
    }
    points
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Waits for each sample point in turn and samples the runner there.
fn take_samples(running: &mut Running, started: Instant, ceiling: Duration) -> Vec<Sample> {
    let mut samples = Vec::new();
    for point in sample_points() {
        let left = ceiling.saturating_sub(started.elapsed());
        running.wait_for_finished(point, left);
        let Some(usage) = procs::usage(running.runner) else {
            running.abandon(&format!("the runner ended before its sample at {point}"));
        };
        let sample = Sample {
            finished: running.finished_count(),
            usage,
            wall: started.elapsed(),
        };
        figures(
            &format!("soak sample at {point}"),
            &[
                ("finished", sample.finished.to_string()),
                ("fds", usage.fds.to_string()),
                ("threads", usage.threads.to_string()),
                ("rss", mib(usage.rss_kib)),
                ("wall", format!("{:.1}s", sample.wall.as_secs_f64())),
            ],
        );
        samples.push(sample);
    }
    samples
}

/// The bounds after the warm-up, as `(fds, threads, rss KiB)`.
fn bounds(warm: Usage) -> (usize, usize, u64) {
    (
        warm.fds + FD_SLACK,
        warm.threads + THREAD_SLACK,
        warm.rss_kib + warm.rss_kib * RSS_SLACK_PERCENT / 100 + RSS_SLACK_MIB * 1024,
    )
}

/// The samples after the warm-up that exceed a bound, described.
fn over_bounds(samples: &[Sample], warm: Usage) -> Vec<String> {
    let (fds, threads, rss) = bounds(warm);
    samples
        .iter()
        .filter(|s| s.finished > WARM_UP)
        .filter(|s| s.usage.fds > fds || s.usage.threads > threads || s.usage.rss_kib > rss)
        .map(|s| format!("{s:?}"))
        .collect()
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
    let samples = take_samples(&mut running, started, ceiling);
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
    // Every scenario started the agent it was meant to: the fixture ones the fixture agent, the
    // others real OpenCode.
    assert_eq!(sandbox.count("agent"), FIXTURE, "{:?}", sandbox.pids());
    assert_eq!(sandbox.count("server"), OPENCODE, "{:?}", sandbox.pids());

    let warm = samples
        .iter()
        .find(|s| s.finished >= WARM_UP)
        .expect("a sample at the warm-up")
        .usage;
    let after: Vec<&Sample> = samples.iter().filter(|s| s.finished > WARM_UP).collect();
    let max_of = |f: fn(&Usage) -> u64| after.iter().map(|s| f(&s.usage)).max().unwrap_or(0);
    let last = samples.last().expect("samples").usage;
    let (fd_bound, thread_bound, rss_bound) = bounds(warm);
    figures(
        "heavy_soak",
        &[
            ("scenarios", results.len().to_string()),
            ("passed", count(&results, "ok").to_string()),
            ("fixture agents", sandbox.count("agent").to_string()),
            ("opencode servers", sandbox.count("server").to_string()),
            ("samples", samples.len().to_string()),
            (
                "fds warm/max after/last/bound",
                format!(
                    "{}/{}/{}/{fd_bound}",
                    warm.fds,
                    max_of(|u| u.fds as u64),
                    last.fds
                ),
            ),
            (
                "threads warm/max after/last/bound",
                format!(
                    "{}/{}/{}/{thread_bound}",
                    warm.threads,
                    max_of(|u| u.threads as u64),
                    last.threads
                ),
            ),
            (
                "rss warm/max after/last/bound",
                format!(
                    "{}/{}/{}/{}",
                    mib(warm.rss_kib),
                    mib(max_of(|u| u.rss_kib)),
                    mib(last.rss_kib),
                    mib(rss_bound)
                ),
            ),
            ("processes seen", finished.seen.len().to_string()),
            ("survivors", "0".into()),
            ("roots left", "0".into()),
            ("wall", format!("{:.1}s", finished.elapsed.as_secs_f64())),
            ("clean after exit", format!("{clean:.2?}")),
        ],
    );
    let over = over_bounds(&samples, warm);
    assert!(
        over.is_empty(),
        "the runner grew past its bounds (fds {fd_bound}, threads {thread_bound}, rss \
         {rss_bound} KiB; warm-up {warm:?}):\n{}",
        over.join("\n")
    );
}

/// The bounds pass a flat run with its spread and catch a leak of one fd or thread per 50
/// scenarios, or of 40 KiB per scenario; the warm-up's own samples are not held to them.
fn the_bounds_pass_a_flat_run_and_catch_slow_growth() {
    let sample = |finished, fds, threads, rss_kib| Sample {
        finished,
        usage: Usage {
            fds,
            threads,
            rss_kib,
        },
        wall: Duration::ZERO,
    };
    /// What a run adds to the warm-up's fds, threads and KiB at each sample point.
    type Growth = fn(usize) -> (usize, usize, u64);
    fn past_warm_up(at: usize) -> usize {
        at.saturating_sub(WARM_UP)
    }
    let warm = sample(WARM_UP, 40, 20, 40 * 1024).usage;
    let run = |grow: Growth| -> Vec<Sample> {
        sample_points()
            .into_iter()
            .map(|at| {
                let (fds, threads, rss) = grow(at);
                sample(at, 40 + fds, 20 + threads, 40 * 1024 + rss)
            })
            .collect()
    };
    // Before the warm-up anything goes; after it, a spread within the bounds.
    let mut flat = run(|at| {
        if at % 200 == 0 {
            (10, 6, 9 * 1024)
        } else {
            (0, 0, 0)
        }
    });
    flat[0] = sample(EVERY, 400, 200, 400 * 1024);
    assert_eq!(over_bounds(&flat, warm), Vec::<String>::new());
    let leaks: [(&str, Growth); 3] = [
        ("fds", |at| (past_warm_up(at) / 50, 0, 0)),
        ("threads", |at| (0, past_warm_up(at) / 50, 0)),
        ("rss", |at| (0, 0, past_warm_up(at) as u64 * 40)),
    ];
    for (what, grow) in leaks {
        assert!(
            !over_bounds(&run(grow), warm).is_empty(),
            "{what} grew unseen"
        );
    }
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(the_bounds_pass_a_flat_run_and_catch_slow_growth),
        test!(heavy_a_thousand_and_fifty_scenarios_in_one_runner_do_not_grow)
            .ignore("heavy: 1,050 scenarios in one runner, 50 on real OpenCode; ~10 minutes")
            .needs(OpenCode),
    ]
}
