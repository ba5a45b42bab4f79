//! The soak runner's samples and the bounds they are held to (`soak`).
//!
//! A sample is the highest of [`READS`] reads of `/proc/<runner>` [`READ_GAP`] apart: the
//! runner has 4 scenarios in flight, and what they hold at one instant varies (an agent
//! starting, a stream open, a runtime shutting down); the highest of a few reads is the top of
//! that spread. The warm-up is the highest of the samples up to [`WARM_UP`] scenarios: by then
//! the runtime's pools, the allocator's arenas and every code path are in use. Every later
//! sample must stay within:
//! - file descriptors: warm-up + [`FD_SLACK`] (a 4-scenario spread of ~26 was measured on
//!   single reads); a leak of one per 50 scenarios would exceed it by the end;
//! - threads: warm-up + [`THREAD_SLACK`] (spread ~10 on single reads); a leaked thread per 100
//!   scenarios would exceed it;
//! - resident set: warm-up + [`RSS_SLACK_PERCENT`]% + [`RSS_SLACK_MIB`] MiB (~7.5 MiB on
//!   ~18 MiB), which a leak of ~9 KiB per scenario (a turn's events, a log) would exceed. It
//!   allows for glibc's per-thread arenas: a runtime per scenario spreads the work over up to
//!   8 arenas per core, each growing once to the peak of the heaviest scenario it served, which
//!   showed as a step of 2 to 3 MiB when the real-OpenCode scenarios began, and none with
//!   `MALLOC_ARENA_MAX=1`.

use std::time::{Duration, Instant};

use harness_selftest::prerequisites::Test;
use harness_selftest::procs::{self, Usage};
use harness_selftest::run::Running;
use harness_selftest::test;

use crate::run_checks::figures;

/// Scenarios after which the runner is warm.
pub(crate) const WARM_UP: usize = 200;
/// Reads per sample, and the pause between them.
const READS: usize = 5;
const READ_GAP: Duration = Duration::from_millis(20);

/// File descriptors a sample may hold beyond the warm-up.
const FD_SLACK: usize = 16;
/// Threads a sample may run beyond the warm-up.
const THREAD_SLACK: usize = 8;
/// Resident-set growth allowed over the warm-up: this percentage of it, plus…
const RSS_SLACK_PERCENT: u64 = 20;
/// …this many MiB.
const RSS_SLACK_MIB: u64 = 4;

/// The runner's usage once `point` scenarios finished (`finished` had, when it was read).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sample {
    pub(crate) point: usize,
    pub(crate) finished: usize,
    pub(crate) usage: Usage,
    pub(crate) wall: Duration,
}

/// When to sample: every 25 finished scenarios from 100 to the warm-up, every 100 after it
/// through the fixture ones, then every 10 through the real-OpenCode ones (too few for a sample
/// every 100), the last after all of them. The warm-up is the top of its samples' spread: with
/// two samples it once missed that top (72 fds, where the run's flat spread reached 90).
pub(crate) fn sample_points(fixture: usize, opencode: usize) -> Vec<usize> {
    let total = fixture + opencode;
    let warming = (100..WARM_UP.min(fixture)).step_by(25);
    let mut points: Vec<usize> = warming.chain((WARM_UP..=fixture).step_by(100)).collect();
    let last = points.last().copied().unwrap_or(0);
    points.extend((last + 10..total).step_by(10));
    points.push(total);
    points
}

/// The highest of [`READS`] reads of `pid`'s usage; `None` once it is gone.
fn peak_usage(pid: u32) -> Option<Usage> {
    let mut peak = procs::usage(pid)?;
    for _ in 1..READS {
        std::thread::sleep(READ_GAP);
        let now = procs::usage(pid)?;
        peak = Usage {
            fds: peak.fds.max(now.fds),
            threads: peak.threads.max(now.threads),
            rss_kib: peak.rss_kib.max(now.rss_kib),
        };
    }
    Some(peak)
}

pub(crate) fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Waits for each of `points` in turn (all within `ceiling` of `started`), samples the runner
/// there and prints the sample.
pub(crate) fn take(
    running: &mut Running,
    points: &[usize],
    started: Instant,
    ceiling: Duration,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    for &point in points {
        running.wait_for_finished(point, ceiling.saturating_sub(started.elapsed()));
        let Some(usage) = peak_usage(running.runner) else {
            running.abandon(&format!("the runner ended before its sample at {point}"));
        };
        let sample = Sample {
            point,
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

/// The highest usage of the samples up to the warm-up.
pub(crate) fn warm_up(samples: &[Sample]) -> Usage {
    samples
        .iter()
        .filter(|s| s.point <= WARM_UP)
        .map(|s| s.usage)
        .reduce(|a, b| Usage {
            fds: a.fds.max(b.fds),
            threads: a.threads.max(b.threads),
            rss_kib: a.rss_kib.max(b.rss_kib),
        })
        .expect("samples up to the warm-up")
}

/// What a sample after the warm-up may hold at most.
pub(crate) fn bounds(warm: Usage) -> Usage {
    Usage {
        fds: warm.fds + FD_SLACK,
        threads: warm.threads + THREAD_SLACK,
        rss_kib: warm.rss_kib + warm.rss_kib * RSS_SLACK_PERCENT / 100 + RSS_SLACK_MIB * 1024,
    }
}

/// The samples after the warm-up beyond a bound, described.
pub(crate) fn over_bounds(samples: &[Sample]) -> Vec<String> {
    let bound = bounds(warm_up(samples));
    samples
        .iter()
        .filter(|s| s.point > WARM_UP)
        .filter(|s| {
            let u = s.usage;
            u.fds > bound.fds || u.threads > bound.threads || u.rss_kib > bound.rss_kib
        })
        .map(|s| format!("{s:?}"))
        .collect()
}

/// The bounds pass a flat run with its spread, and catch a leak of one fd or thread per 50
/// scenarios, or of 10 KiB per scenario.
fn the_bounds_pass_a_flat_run_and_catch_slow_growth() {
    /// What a run adds to a base of 40 fds, 20 threads and 18 MiB at each sample point.
    type Growth = fn(usize) -> (usize, usize, u64);
    fn past_warm_up(point: usize) -> usize {
        point.saturating_sub(WARM_UP)
    }
    let run = |grow: Growth| -> Vec<Sample> {
        sample_points(1_000, 50)
            .into_iter()
            .map(|point| {
                let (fds, threads, rss) = grow(point);
                let usage = Usage {
                    fds: 40 + fds,
                    threads: 20 + threads,
                    rss_kib: 18 * 1024 + rss,
                };
                Sample {
                    point,
                    finished: point,
                    usage,
                    wall: Duration::ZERO,
                }
            })
            .collect()
    };
    // A spread up to the bounds after the warm-up passes; one more fd does not.
    let at_the_edge = run(|point| match point {
        p if p > WARM_UP && p % 200 == 0 => (16, 8, 7 * 1024),
        _ => (0, 0, 0),
    });
    assert_eq!(over_bounds(&at_the_edge), Vec::<String>::new());
    let over_the_edge = run(|point| (usize::from(point == 600) * 17, 0, 0));
    assert_eq!(over_bounds(&over_the_edge).len(), 1);
    let leaks: [(&str, Growth); 3] = [
        ("fds", |point| (past_warm_up(point) / 50, 0, 0)),
        ("threads", |point| (0, past_warm_up(point) / 50, 0)),
        ("rss", |point| (0, 0, past_warm_up(point) as u64 * 10)),
    ];
    for (what, grow) in leaks {
        assert!(!over_bounds(&run(grow)).is_empty(), "{what} grew unseen");
    }
    assert_eq!(
        sample_points(1_000, 50)[..6],
        [100, 125, 150, 175, 200, 300]
    );
    assert_eq!(
        sample_points(1_000, 50)[11..],
        [900, 1000, 1010, 1020, 1030, 1040, 1050]
    );
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![test!(the_bounds_pass_a_flat_run_and_catch_slow_growth)]
}
