//! `nextest_default`: the default live suite (shared servers, no `LIVE_ISOLATION`) under
//! `cargo nextest run --test live` against the same under `cargo test --test live`: the same
//! filter, 2 test threads each (the default of both on 2 cores), runs interleaved, and every
//! run must end every scenario as the first `cargo test` run did (the runners' own ways of
//! showing a skip are explained on progress lines, see `nextest_output::compare`).
//!
//! Neither side's clock includes cargo's build step, which waits for a lock another build of
//! the target dir may hold: the `cargo test` side runs the test binary as `cargo test` does
//! (`live <filter> --test-threads 2`), the nextest side runs `cargo nextest run` on that same
//! binary through nextest's reuse of a build (`--binaries-metadata` from `cargo nextest list
//! --list-type binaries-only`, `--cargo-metadata` from `cargo metadata`), so it lists and runs
//! the binary as `cargo nextest run --test live` does after building it. Both run a private
//! copy of the binary (`suite::private_copy`), which no build replaces during the runs.
//!
//! A missing cargo-nextest fails the section: the figure is not optional.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::{Bench, BenchError, progress, secs};
use crate::libtest;
use crate::nextest_output;
use crate::report::Figure;
use crate::suite::{self, tail};

const SECTION: &str = "nextest";
/// The test threads of both sides.
const THREADS: &str = "2";
/// Listing, metadata.
const PREPARE_CEILING: Duration = Duration::from_secs(30 * 60);
/// One run of the filtered suite.
const RUN_CEILING: Duration = Duration::from_secs(30 * 60);
/// How long the processes of a nextest run (a pool it started) may outlive it before the
/// next run starts: they would weigh on it.
const LINGER_CEILING: Duration = Duration::from_secs(120);

/// Blocking: runs child processes only.
pub fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let version = nextest_version(bench)?;
    let filter = &bench.settings.nextest_filter;
    let pairs = bench.settings.nextest_pairs();
    progress(
        SECTION,
        &format!(
            "{version}; filter {filter:?}; {pairs} pair(s) of runs, cargo test and nextest \
             interleaved"
        ),
    );
    let metadata =
        tempfile::tempdir().map_err(|e| BenchError::io("create the metadata folder", e))?;
    let prepared = prepare(bench, metadata.path())?;
    let mut cargo_test: Vec<Duration> = Vec::new();
    let mut nextest: Vec<Duration> = Vec::new();
    let mut reference: Option<BTreeMap<String, String>> = None;
    let mut explained = false;
    for pair in 0..pairs {
        let order = if pair % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for under_nextest in order {
            if !under_nextest {
                let (wall, _, outcomes) =
                    suite::run_suite_with(bench, &prepared.binary.path, filter, None, 2, &[])?;
                progress(
                    SECTION,
                    &format!(
                        "cargo test run {}: {} ({})",
                        cargo_test.len() + 1,
                        secs(wall),
                        counts(&outcomes)
                    ),
                );
                match &reference {
                    None => reference = Some(outcomes),
                    Some(expected) => {
                        let differences = libtest::differences(expected, &outcomes);
                        if !differences.is_empty() {
                            return Err(BenchError::Suite(format!(
                                "two cargo test runs ended scenarios differently: {}",
                                differences.join("; ")
                            )));
                        }
                    }
                }
                cargo_test.push(wall);
                continue;
            }
            let (wall, mut outcomes, output) = run_nextest(bench, &prepared, filter)?;
            // The first pair starts with cargo test: its outcomes are the reference.
            let expected = reference.as_ref().expect("cargo test ran first");
            // nextest lists what its filter left out as skipped; libtest leaves it out.
            outcomes.retain(|name, outcome| outcome != "ignored" || expected.contains_key(name));
            progress(
                SECTION,
                &format!(
                    "nextest run {}: {} ({})",
                    nextest.len() + 1,
                    secs(wall),
                    counts(&outcomes)
                ),
            );
            nextest.push(wall);
            let comparison = nextest_output::compare(expected, &outcomes);
            if !comparison.differences.is_empty() {
                return Err(BenchError::Suite(format!(
                    "cargo test and nextest ended scenarios differently, so their times are not \
                     comparable: {}; nextest's output ends: {}",
                    comparison.differences.join("; "),
                    bench.redactor.redact(&tail(&output, 40))
                )));
            }
            if !explained {
                for note in &comparison.explained {
                    progress(SECTION, note);
                }
                explained = true;
            }
        }
    }
    progress(
        SECTION,
        &format!("cargo test: {}", suite::spread(&cargo_test)),
    );
    progress(SECTION, &format!("nextest: {}", suite::spread(&nextest)));
    Ok([
        Figure::ratio("nextest_default", &nextest, &cargo_test),
        Figure::median("suite.nextest_default", &nextest),
        Figure::median("suite.cargo_test_default", &cargo_test),
    ]
    .into_iter()
    .flatten()
    .collect())
}

fn counts(outcomes: &BTreeMap<String, String>) -> String {
    let count = |what: &str| outcomes.values().filter(|o| *o == what).count();
    format!(
        "{} scenarios: {} passed, {} failed, {} ignored",
        outcomes.len(),
        count("ok"),
        count("FAILED"),
        count("ignored")
    )
}

/// Cargo, without what Cargo set for this bench (a nested build would rebuild ring for it).
fn cargo() -> Command {
    harness_selftest::prerequisites::cargo()
}

/// `cargo nextest --version`'s first line, or the error that says to install it.
fn nextest_version(bench: &Bench) -> Result<String, BenchError> {
    let output = cargo()
        .args(["nextest", "--version"])
        .current_dir(&bench.manifest_dir)
        .output()
        .map_err(|e| BenchError::io("run `cargo nextest --version`", e))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().next() {
        Some(line) if output.status.success() && line.contains("nextest") => Ok(line.to_string()),
        _ => Err(BenchError::Suite(format!(
            "cargo-nextest is not installed (`cargo nextest --version`: {}; {}): the \
             nextest_default figure needs it; install it with `cargo install cargo-nextest \
             --locked`, or leave the section out with --only",
            output.status,
            tail(&String::from_utf8_lossy(&output.stderr), 2)
        ))),
    }
}

/// What both sides run: a private copy of the `live` binary nextest found, and the metadata
/// nextest reuses, naming that copy.
struct Prepared {
    binary: suite::PrivateBinary,
    binaries_metadata: PathBuf,
    cargo_metadata: PathBuf,
}

/// Builds the live suite and lists it (`cargo nextest list --test live --list-type
/// binaries-only`), and writes `cargo metadata`: after this, no run waits for cargo.
fn prepare(bench: &Bench, folder: &Path) -> Result<Prepared, BenchError> {
    progress(
        SECTION,
        "building and listing the live suite (cargo nextest list --test live)",
    );
    let mut list = cargo();
    list.args([
        "nextest",
        "list",
        "--test",
        "live",
        "--list-type",
        "binaries-only",
        "--message-format",
        "json",
        "--color",
        "never",
    ])
    .current_dir(&bench.manifest_dir);
    let (listed, _) = suite::run(list, PREPARE_CEILING, "list the live suite with nextest")?;
    let binaries: serde_json::Value = serde_json::from_str(listed.stdout.trim()).map_err(|e| {
        BenchError::Suite(format!(
            "`cargo nextest list --list-type binaries-only` printed no JSON ({e}; {}); its \
                 stderr ends: {}",
            listed.status,
            bench.redactor.redact(&tail(&listed.stderr, 15))
        ))
    })?;
    let mut binaries = binaries;
    let live = binaries["rust-binaries"]
        .as_object_mut()
        .into_iter()
        .flat_map(|b| b.values_mut())
        .find(|b| b["binary-name"] == "live" && b["kind"] == "test")
        .ok_or_else(|| {
            BenchError::Suite("`cargo nextest list --test live` listed no `live` binary".into())
        })?;
    let built = live["binary-path"]
        .as_str()
        .map(PathBuf::from)
        .ok_or_else(|| {
            BenchError::Suite("`cargo nextest list` named no path for the `live` binary".into())
        })?;
    // Both sides run the same copy; nextest is told where it is.
    let binary = suite::private_copy(&built)?;
    live["binary-path"] = binary.path.to_string_lossy().into_owned().into();
    let binaries_metadata = folder.join("binaries-metadata.json");
    std::fs::write(&binaries_metadata, binaries.to_string())
        .map_err(|e| BenchError::io("write the binaries metadata", e))?;
    let mut metadata = cargo();
    metadata
        .args(["metadata", "--format-version", "1"])
        .current_dir(&bench.manifest_dir);
    let (described, _) = suite::run(metadata, PREPARE_CEILING, "run cargo metadata")?;
    if !described.status.success() {
        return Err(BenchError::Suite(format!(
            "`cargo metadata` failed ({}): {}",
            described.status,
            bench.redactor.redact(&tail(&described.stderr, 5))
        )));
    }
    let cargo_metadata = folder.join("cargo-metadata.json");
    std::fs::write(&cargo_metadata, described.stdout)
        .map_err(|e| BenchError::io("write the cargo metadata", e))?;
    Ok(Prepared {
        binary,
        binaries_metadata,
        cargo_metadata,
    })
}

/// One `cargo nextest run` of the filtered default suite: its wall time (until cargo-nextest
/// exits), every scenario's outcome and its output. Then waits for the run's processes that
/// outlive it.
fn run_nextest(
    bench: &Bench,
    prepared: &Prepared,
    filter: &str,
) -> Result<(Duration, BTreeMap<String, String>, String), BenchError> {
    let mut command = cargo();
    command
        .args(["nextest", "run", "--binaries-metadata"])
        .arg(&prepared.binaries_metadata)
        .arg("--cargo-metadata")
        .arg(&prepared.cargo_metadata)
        .args([
            "--test-threads",
            THREADS,
            "--no-fail-fast",
            "--color",
            "never",
            "--status-level",
            "all",
            "--final-status-level",
            "none",
        ])
        .env_remove("LIVE_ISOLATION")
        .current_dir(&bench.manifest_dir);
    if !filter.is_empty() {
        command.arg(filter);
    }
    let started = Instant::now();
    let (output, _) = suite::run(command, RUN_CEILING, "run the live suite under nextest")?;
    let wall = started.elapsed();
    let text = format!("{}\n{}", output.stdout, output.stderr);
    let outcomes = nextest_output::outcomes(&text);
    if outcomes.is_empty() {
        return Err(BenchError::Suite(format!(
            "cargo nextest run ran no scenario ({}; filter {filter:?}); its output ends: {}",
            output.status,
            bench.redactor.redact(&tail(&text, 15))
        )));
    }
    if let Some(id) = nextest_output::run_id(&text) {
        wait_for_run_processes(&id);
    }
    Ok((wall, outcomes, text))
}

/// Waits until no process carries `NEXTEST_RUN_ID=<id>` (a pool the run started stops once the
/// run is over), up to [`LINGER_CEILING`]; says how long that took, or that they still ran.
fn wait_for_run_processes(id: &str) {
    let mark = format!("NEXTEST_RUN_ID={id}");
    let started = Instant::now();
    let mut lingered = false;
    loop {
        let left = processes_with(&mark);
        if left == 0 {
            if lingered {
                progress(
                    SECTION,
                    &format!(
                        "the run's processes outlived it by {}",
                        secs(started.elapsed())
                    ),
                );
            }
            return;
        }
        lingered = true;
        if started.elapsed() > LINGER_CEILING {
            progress(
                SECTION,
                &format!(
                    "warning: {left} process(es) of the nextest run still ran {LINGER_CEILING:?} \
                     after it ended; the next run starts anyway"
                ),
            );
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// How many processes have `mark` (`NAME=value`) in their environment.
fn processes_with(mark: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|entry| {
            std::fs::read(entry.path().join("environ"))
                .is_ok_and(|environ| environ.split(|b| *b == 0).any(|var| var == mark.as_bytes()))
        })
        .count()
}
