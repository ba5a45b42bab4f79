//! `shared_speedup` and `thread_scaling`: the live suite's wall time (the `live` test binary,
//! as `cargo test --test live` builds it) with per-scenario servers (`LIVE_ISOLATION=server`)
//! against the default (shared servers, no variable set), and with 1 against 2 test threads;
//! and each configuration's peak memory (the summed resident sets of the processes the runner
//! started). Every run must end every scenario the same way, or the times are not comparable.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::agent_memory::Sampler;
use crate::common::{Bench, BenchError, progress, secs};
use crate::libtest;
use crate::report::Figure;

const SECTION: &str = "suite";
/// The variable the runner reads to choose per-scenario (`server`) or shared servers.
const ISOLATION_ENV: &str = "LIVE_ISOLATION";
/// Building the live suite from scratch on a loaded 2-core machine takes minutes.
const BUILD_CEILING: Duration = Duration::from_secs(30 * 60);
/// One run of the filtered suite.
const RUN_CEILING: Duration = Duration::from_secs(30 * 60);

/// One configuration of the suite: isolation mode (`None`: the default, no variable set) and
/// test threads.
#[derive(Clone, Copy, Debug)]
struct Config {
    isolation: Option<&'static str>,
    threads: usize,
}

impl Config {
    fn label(self) -> String {
        format!("{}@{}", self.isolation.unwrap_or("default"), self.threads)
    }
}

const SERVER_2: Config = Config {
    isolation: Some("server"),
    threads: 2,
};
const DEFAULT_2: Config = Config {
    isolation: None,
    threads: 2,
};
const SERVER_1: Config = Config {
    isolation: Some("server"),
    threads: 1,
};

/// Blocking: runs child processes only.
///
/// Per server and shared run interleaved (server, shared, shared, server, …), `suite_runs` times
/// each, and each figure is the median of its runs: one run a side moved `shared_speedup` by
/// ±10 %. The one-thread run, long and only for `thread_scaling`, runs once, after the first
/// pair.
pub fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let private = build_private(bench)?;
    let binary = &private.path;
    let filter = &bench.settings.suite_filter;
    let runs = bench.settings.suite_runs();
    progress(
        SECTION,
        &format!(
            "suite filter {filter:?}; {runs} run(s) a side per server and shared, interleaved; \
             one with 1 thread"
        ),
    );
    let configs = [SERVER_2, DEFAULT_2, SERVER_1];
    let mut walls: [Vec<Duration>; 3] = Default::default();
    let mut peaks: [Vec<u64>; 3] = Default::default();
    let mut reference: Option<(String, BTreeMap<String, String>)> = None;
    let mut schedule = Vec::new();
    for run in 0..runs {
        schedule.extend(if run % 2 == 0 { [0, 1] } else { [1, 0] });
        if run == 0 {
            schedule.push(2);
        }
    }
    for index in schedule {
        let config = configs[index];
        let (wall, peak, outcomes) = run_suite(bench, binary, config)?;
        peaks[index].push(peak);
        let passed = outcomes.values().filter(|o| *o == "ok").count();
        let failed = outcomes.values().filter(|o| *o == "FAILED").count();
        progress(
            SECTION,
            &format!(
                "{} run {}: {}, agents' peak {:.0} MiB ({} scenarios: {passed} passed, \
                 {failed} failed, {} ignored)",
                config.label(),
                walls[index].len() + 1,
                secs(wall),
                peak as f64 / (1024.0 * 1024.0),
                outcomes.len(),
                outcomes.len() - passed - failed
            ),
        );
        if failed > 0 {
            let names: Vec<&str> = outcomes
                .iter()
                .filter(|(_, o)| *o == "FAILED")
                .map(|(name, _)| name.as_str())
                .collect();
            progress(
                SECTION,
                &format!(
                    "warning: scenarios failed ({}); the figures compare runs that fail alike",
                    names.join(", ")
                ),
            );
        }
        match &reference {
            None => reference = Some((config.label(), outcomes)),
            Some((label, expected)) => {
                let expected = if config.threads == 1 {
                    tolerate_lone_skips(expected, &outcomes)
                } else {
                    expected.clone()
                };
                let differences = libtest::differences(&expected, &outcomes);
                if !differences.is_empty() {
                    return Err(BenchError::Suite(format!(
                        "{} and {} ended scenarios differently, so their times are not \
                         comparable: {}",
                        label,
                        config.label(),
                        differences.join("; ")
                    )));
                }
            }
        }
        walls[index].push(wall);
    }
    let [server, shared, single] = &walls;
    for (index, runs) in walls.iter().enumerate().take(2) {
        progress(
            SECTION,
            &format!("{}: {}", configs[index].label(), spread(runs)),
        );
    }
    let [server_peak, shared_peak, single_peak] = &peaks;
    Ok([
        Figure::ratio("shared_speedup", server, shared),
        Figure::ratio("thread_scaling", single, server),
        Figure::median("suite.server_2_threads", server),
        Figure::median("suite.default_2_threads", shared),
        Figure::median("suite.server_1_thread", single),
        Figure::peak("suite.agents_rss.server_2_threads", server_peak),
        Figure::peak("suite.agents_rss.default_2_threads", shared_peak),
        Figure::peak("suite.agents_rss.server_1_thread", single_peak),
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// `runs: 52.1 s, 55.0 s, 49.8 s (spread 10.4 % of the median)`, for progress lines: how far
/// apart the runs a median comes from were.
pub fn spread(runs: &[Duration]) -> String {
    let listed: Vec<String> = runs.iter().map(|d| secs(*d)).collect();
    let (Some(low), Some(high), Some(middle)) = (
        runs.iter().min(),
        runs.iter().max(),
        crate::report::median(runs),
    ) else {
        return "no runs".into();
    };
    format!(
        "runs {} (spread {:.1} % of the median)",
        listed.join(", "),
        (*high - *low).as_secs_f64() / middle.as_secs_f64().max(f64::EPSILON) * 100.0
    )
}

/// The reference outcomes with the scenarios a one-thread run skipped where the reference
/// passed counted as skipped too: scenarios that meet a peer (the parallel-isolation pair)
/// skip by design when only one runs at a time. Said on the progress line, never silent.
fn tolerate_lone_skips(
    expected: &BTreeMap<String, String>,
    single: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut adjusted = expected.clone();
    for (name, outcome) in single {
        if outcome == "ignored" && expected.get(name).is_some_and(|o| o == "ok") {
            progress(
                SECTION,
                &format!(
                    "{name}: skipped with one thread (it needs a peer at once); compared as skipped"
                ),
            );
            adjusted.insert(name.clone(), outcome.clone());
        }
    }
    adjusted
}

/// A copy of the live suite's binary that the bench's runs use, in the same layout
/// (`target/debug/deps/live-<hash>`, so the run report still lands in `target/live-report` of
/// the copy's folder): the suite re-executes its own binary (reaper, sandbox launcher, fixture
/// agent), and a build of the same checkout during a run (a developer's, another tool's) would
/// replace it under the run. Removed on drop.
pub struct PrivateBinary {
    _folder: tempfile::TempDir,
    pub path: PathBuf,
}

/// Copies `binary` into a folder of the bench's own in its target dir, beside the original: a
/// scenario that names the binary in a failure message checks it holds no `/tmp/` path, and a
/// copy in the system's temp directory (or the target's `tmp/`) made it fail.
pub fn private_copy(binary: &Path) -> Result<PrivateBinary, BenchError> {
    // `<target>/debug/deps/live-<hash>` → `<target>`.
    let target = binary.ancestors().nth(3).ok_or_else(|| {
        BenchError::Suite("the live suite's binary is not in a target dir".into())
    })?;
    let folder = tempfile::Builder::new()
        .prefix("bench-live-suite-")
        .tempdir_in(target)
        .map_err(|e| BenchError::io("create a folder for the live suite's binary", e))?;
    let deps = folder.path().join("target").join("debug").join("deps");
    std::fs::create_dir_all(&deps)
        .map_err(|e| BenchError::io("create a folder for the live suite's binary", e))?;
    let path = deps.join(binary.file_name().expect("a binary has a file name"));
    std::fs::copy(binary, &path).map_err(|e| BenchError::io("copy the live suite's binary", e))?;
    Ok(PrivateBinary {
        _folder: folder,
        path,
    })
}

/// `cargo test --test live --no-run`, then a [`private_copy`] of the binary `cargo test --test
/// live` runs.
pub fn build_private(bench: &Bench) -> Result<PrivateBinary, BenchError> {
    private_copy(&build(bench)?)
}

/// `cargo test --test live --no-run`: the binary `cargo test --test live` runs.
pub fn build(bench: &Bench) -> Result<PathBuf, BenchError> {
    progress(
        SECTION,
        "building the live suite (cargo test --test live --no-run)",
    );
    let mut command = harness_selftest::prerequisites::cargo();
    command
        .args([
            "test",
            "--test",
            "live",
            "--no-run",
            "--message-format=json",
        ])
        .current_dir(&bench.manifest_dir);
    let (output, _) = run(command, BUILD_CEILING, "build the live suite")?;
    let executable = output.stdout.lines().find_map(|line| {
        let message: serde_json::Value = serde_json::from_str(line).ok()?;
        (message["reason"] == "compiler-artifact" && message["target"]["name"] == "live")
            .then(|| message["executable"].as_str().map(PathBuf::from))
            .flatten()
    });
    executable.ok_or_else(|| {
        BenchError::Suite(format!(
            "`cargo test --test live --no-run` named no executable ({}); its stderr ends: {}",
            output.status,
            bench.redactor.redact(&tail(&output.stderr, 15))
        ))
    })
}

fn run_suite(
    bench: &Bench,
    binary: &Path,
    config: Config,
) -> Result<(Duration, u64, BTreeMap<String, String>), BenchError> {
    let filter = &bench.settings.suite_filter;
    run_suite_with(bench, binary, filter, config.isolation, config.threads, &[])
}

/// One run of the suite filtered by `filter` under `isolation` (`None`: the default) with
/// `threads` test threads and `env`: its wall time, the peak memory of what it started, every
/// scenario's outcome.
pub fn run_suite_with(
    bench: &Bench,
    binary: &Path,
    filter: &str,
    isolation: Option<&'static str>,
    threads: usize,
    env: &[(&str, &str)],
) -> Result<(Duration, u64, BTreeMap<String, String>), BenchError> {
    let config = Config { isolation, threads };
    let mut command = Command::new(binary);
    command.envs(env.iter().copied());
    if !filter.is_empty() {
        command.arg(filter);
    }
    command
        .args([
            "--test-threads",
            &config.threads.to_string(),
            "--color",
            "never",
        ])
        .current_dir(&bench.manifest_dir);
    match config.isolation {
        Some(isolation) => command.env(ISOLATION_ENV, isolation),
        None => command.env_remove(ISOLATION_ENV),
    };
    let started = Instant::now();
    let (output, peak) = run(command, RUN_CEILING, "run the live suite")?;
    let wall = started.elapsed();
    let outcomes = libtest::outcomes(&output.stdout);
    if outcomes.is_empty() {
        return Err(BenchError::Suite(format!(
            "{} ran no scenario ({}; filter {:?}); its stderr ends: {}",
            config.label(),
            output.status,
            filter,
            bench.redactor.redact(&tail(&output.stderr, 15))
        )));
    }
    Ok((wall, peak, outcomes))
}

pub struct Output {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `command` to its end with captured output, killing it at `ceiling` (the live runner's
/// reaper then sweeps whatever it had started). Also returns the peak summed memory of the
/// processes it started.
pub fn run(
    mut command: Command,
    ceiling: Duration,
    what: &'static str,
) -> Result<(Output, u64), BenchError> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| BenchError::io(what, e))?;
    let pid = child.id();
    let memory = Sampler::start(pid);
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("piped")));
    let stderr = read(Box::new(child.stderr.take().expect("piped")));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(ceiling) {
        Ok(status) => status.map_err(|e| BenchError::io(what, e))?,
        Err(_) => {
            // SAFETY: kill only sends a signal to the child we spawned (not yet reaped: the
            // waiting thread still holds it).
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            let _ = rx.recv();
            memory.finish();
            return Err(BenchError::Suite(format!(
                "could not {what} within {ceiling:?}: killed it"
            )));
        }
    };
    Ok((
        Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        },
        memory.finish(),
    ))
}

pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
