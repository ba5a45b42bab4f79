//! The run's pool of shared servers under nextest, run as nextest runs it: one process per
//! scenario (`--exact <name>`), `NEXTEST=1`, one run id (a UUID) for the run's processes, and a
//! runner (`sh` here, nextest's own process there) whose end is the run's.
//!
//! - a second process leases the server the first one started (one pool per run);
//! - a process SIGKILLed while it holds a lease, then the pool's owner SIGKILLed: no process
//!   (no server, no owner, no reaper) and no root or pool directory is left;
//! - an owner that died with its reaper (its server orphaned) is replaced by the next process,
//!   which sweeps the orphan and passes on a new server;
//! - a scenario failing on its lease keeps its evidence (its root, its server's) and nothing else;
//! - a malformed run id: a pool per process, said once.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use harness_runtime::scaled;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::Sandbox;
use harness_selftest::{procs, test};

use crate::SCENARIOS;
use crate::run_checks::{figures, serial};

/// The ceiling of one run, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(240);
/// How long the run's processes may take to end after its runner, before scaling: the owner
/// waits 3 s without a lease, then stops its servers.
const CLEAN_CEILING: Duration = Duration::from_secs(30);
/// The progress line of `pool::holds_its_lease` once it holds its lease.
const LEASED: &str = "holds a lease of the run's pool; kill me now";
/// What a replacing process says.
const REPLACED: &str = "the run's pool owner had died";
/// What a process says when the run id cannot key a pool.
const FALLBACK: &str = "shared servers are pooled per test process";

/// A UUID no other run shares, as nextest's run ids are.
fn run_id() -> String {
    let mut bytes = [0u8; 16];
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    bytes[..12].copy_from_slice(&nanos.to_le_bytes()[..12]);
    bytes[12..].copy_from_slice(&std::process::id().to_le_bytes());
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// `sh -c script` as nextest's runner: `$B` is the scenario binary, every process gets nextest's
/// variables for `run_id`.
fn runner(sandbox: &Sandbox, run_id: &str, script: &str) -> Command {
    let mut command = sandbox.command("sh", &["-c", script]);
    command.envs([
        ("B", SCENARIOS),
        ("NEXTEST", "1"),
        ("NEXTEST_RUN_ID", run_id),
        ("NEXTEST_EXECUTION_MODE", "process-per-test"),
    ]);
    command
}

/// The run's pool directory: `live-pool-<run id>-<binary>` (one pool per test binary of a run).
fn pool_dir(sandbox: &Sandbox, run_id: &str) -> PathBuf {
    let prefix = format!("live-pool-{run_id}-");
    std::fs::read_dir(sandbox.tmp.path())
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .and_then(|name| name.to_str())
                .is_some_and(|name| name.starts_with(&prefix))
        })
        .unwrap_or_else(|| sandbox.tmp.path().join(format!("{prefix}[none yet]")))
}

/// The pids recorded under `label`.
fn recorded(sandbox: &Sandbox, label: &str) -> Vec<u32> {
    sandbox
        .pids()
        .into_iter()
        .filter(|(l, _)| l == label)
        .map(|(_, pid)| pid)
        .collect()
}

fn alive(pid: u32) -> bool {
    procs::table().iter().any(|p| p.pid == pid)
}

/// The pool owner's pid, from its owner file.
fn owner_pid(dir: &Path) -> u32 {
    let text = std::fs::read_to_string(dir.join("owner.json")).expect("the owner file");
    let owner: serde_json::Value = serde_json::from_str(&text).unwrap();
    owner["pid"].as_u64().expect("a pid") as u32
}

fn kill(pid: u32) {
    // SAFETY: kill(2) with a pid this test read from the process table.
    assert_eq!(
        unsafe { libc::kill(pid as i32, libc::SIGKILL) },
        0,
        "kill {pid}"
    );
}

/// Waits until `until` holds, panicking at `ceiling` with `what`.
fn wait_for(what: &str, ceiling: Duration, until: impl Fn() -> bool) {
    let deadline = Instant::now() + scaled(ceiling);
    while !until() {
        assert!(Instant::now() < deadline, "{what} within {ceiling:?}");
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// No process of the run (the owner and its reaper and servers included) and nothing in the
/// run's `TMPDIR` (no root, no pool directory) remains; returns how long that took.
fn assert_nothing_left(sandbox: &Sandbox, finished: &Finished) -> Duration {
    let took = match sandbox.wait_until_clean(finished, scaled(CLEAN_CEILING)) {
        Ok(took) => took,
        Err(left) => panic!(
            "processes of the run remain:\n{}\n{finished}",
            left.join("\n")
        ),
    };
    let started = Instant::now();
    while !sandbox.roots().is_empty() && started.elapsed() < scaled(CLEAN_CEILING) {
        std::thread::sleep(Duration::from_millis(25));
    }
    assert_eq!(
        sandbox.roots(),
        Vec::<String>::new(),
        "left in TMPDIR\n{finished}"
    );
    took
}

/// Two processes of one run, one after the other: the second leases the first's server.
fn pool_a_second_process_leases_the_first_processs_server() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let id = run_id();
    let command = runner(
        &sandbox,
        &id,
        r#""$B" --exact shared::first && "$B" --exact shared::second"#,
    );
    let finished = sandbox.run(command, scaled(RUN_CEILING));
    assert_eq!(finished.code, Some(0), "\n{finished}");
    let (first, second) = (recorded(&sandbox, "first"), recorded(&sandbox, "second"));
    assert_eq!(first.len(), 1, "\n{finished}");
    assert_eq!(
        first, second,
        "the second process got another server\n{finished}"
    );
    let clean = assert_nothing_left(&sandbox, &finished);
    figures(
        "pool_second_process_reuses",
        &[
            ("wall", format!("{:.1}s", finished.elapsed.as_secs_f64())),
            ("clean after the run", format!("{clean:.2?}")),
        ],
    );
}

/// A process SIGKILLed mid-lease, then the pool's owner SIGKILLed: nothing is left.
fn pool_a_lessee_then_the_owner_killed_leave_no_process_and_no_root() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let id = run_id();
    let mut command = runner(&sandbox, &id, r#""$B" --exact pool::holds_its_lease"#);
    command.env("SELFTEST_POOL_HOLD", "1");
    let mut running = sandbox.start(command);
    running.wait_for_line(LEASED, scaled(RUN_CEILING));
    let (lessee, server) = (recorded(&sandbox, "lessee"), recorded(&sandbox, "held"));
    assert_eq!((lessee.len(), server.len()), (1, 1), "{:?}", sandbox.pids());
    let owner = owner_pid(&pool_dir(&sandbox, &id));
    kill(lessee[0]);
    kill(owner);
    let finished = running.wait(scaled(RUN_CEILING));
    let clean = assert_nothing_left(&sandbox, &finished);
    assert!(!alive(server[0]), "the leased server still runs");
    figures(
        "pool_lessee_and_owner_killed",
        &[("clean after the kills", format!("{clean:.2?}"))],
    );
}

/// The owner and its reaper SIGKILLed between two processes (the first's server orphaned): the
/// second replaces the owner, sweeps the orphan and passes on a new server.
fn pool_a_dead_owner_is_replaced_and_the_scenario_passes() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let id = run_id();
    let scratch = sandbox.scratch.path().to_path_buf();
    let command = runner(
        &sandbox,
        &id,
        r#""$B" --exact shared::first && touch "$SELFTEST_SCRATCH/first-done" &&
           while [ ! -e "$SELFTEST_SCRATCH/go" ]; do sleep 0.05; done &&
           "$B" --exact shared::second"#,
    );
    let running = sandbox.start(command);
    wait_for("the first process", RUN_CEILING, || {
        scratch.join("first-done").exists()
    });
    let owner = owner_pid(&pool_dir(&sandbox, &id));
    let reaper = procs::table()
        .into_iter()
        .find(|p| {
            p.ppid == owner
                && procs::environ_value(p.pid, "HARNESS_RUNTIME_ROLE").as_deref() == Some("reaper")
        })
        .expect("the owner's reaper");
    kill(reaper.pid);
    kill(owner);
    let first = recorded(&sandbox, "first");
    assert!(
        alive(first[0]),
        "the orphaned server was swept by someone else"
    );
    std::fs::write(scratch.join("go"), "").unwrap();
    let finished = running.wait(scaled(RUN_CEILING));
    assert_eq!(finished.code, Some(0), "\n{finished}");
    assert_eq!(finished.stderr.matches(REPLACED).count(), 1, "\n{finished}");
    let second = recorded(&sandbox, "second");
    assert_ne!(first, second, "\n{finished}");
    assert!(!alive(first[0]), "the dead owner's server was not swept");
    assert_nothing_left(&sandbox, &finished);
}

/// A scenario that fails on a server of the run's pool: it names the server's root it kept;
/// after the run no process is left, and the pool's directory holds only the failure's
/// evidence (the scenario's and the server's roots) and the owner's files naming it.
fn pool_a_failure_keeps_its_evidence_and_nothing_else() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let id = run_id();
    let mut command = runner(&sandbox, &id, r#""$B" --exact pool::fails_on_its_lease"#);
    command.env("SELFTEST_POOL_FAIL", "1");
    let finished = sandbox.run(command, scaled(RUN_CEILING));
    assert_eq!(finished.code, Some(101), "\n{finished}");
    let dir = pool_dir(&sandbox, &id);
    let kept_server = finished
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("kept shared server root: "))
        .unwrap_or_else(|| panic!("no kept server root named\n{finished}"));
    assert!(Path::new(kept_server).starts_with(&dir), "{kept_server}");
    sandbox
        .wait_until_clean(&finished, scaled(CLEAN_CEILING))
        .unwrap_or_else(|left| panic!("processes remain:\n{}\n{finished}", left.join("\n")));
    // The owner is gone: what it leaves is the evidence and the files that name it.
    wait_for("the owner's end", CLEAN_CEILING, || {
        !dir.join("owner.json").exists()
    });
    let mut left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    left.sort();
    let roots: Vec<&String> = left.iter().filter(|n| n.starts_with("live-")).collect();
    assert_eq!(
        roots.len(),
        2,
        "the scenario's root and its server's: {left:?}"
    );
    assert!(dir.join(kept_server).is_dir(), "{left:?}");
    for own in ["kept", "owner.lock", "owner.log"] {
        assert!(left.iter().any(|n| n == own), "{own}: {left:?}");
    }
    assert_eq!(left.len(), 5, "{left:?}");
}

/// A run id that is no UUID: each process pools its own servers, and says so once.
fn pool_a_malformed_run_id_falls_back_to_a_pool_per_process_said_once() {
    let _serial = serial();
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(
        SCENARIOS,
        &["--test-threads", "1", "shared::", "--skip", "shared::own"],
    );
    command.envs([
        ("NEXTEST", "1"),
        ("NEXTEST_RUN_ID", "../not-a-uuid"),
        ("NEXTEST_EXECUTION_MODE", "process-per-test"),
    ]);
    let finished = sandbox.run_clean(command, scaled(RUN_CEILING));
    assert_eq!(finished.code, Some(0), "\n{finished}");
    assert_eq!(finished.stderr.matches(FALLBACK).count(), 1, "\n{finished}");
    assert_eq!(recorded(&sandbox, "first"), recorded(&sandbox, "second"));
    assert_eq!(sandbox.roots(), Vec::<String>::new(), "\n{finished}");
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(pool_a_second_process_leases_the_first_processs_server).needs(OpenCode),
        test!(pool_a_lessee_then_the_owner_killed_leave_no_process_and_no_root).needs(OpenCode),
        test!(pool_a_dead_owner_is_replaced_and_the_scenario_passes).needs(OpenCode),
        test!(pool_a_malformed_run_id_falls_back_to_a_pool_per_process_said_once).needs(OpenCode),
        test!(pool_a_failure_keeps_its_evidence_and_nothing_else).needs(OpenCode),
    ]
}
