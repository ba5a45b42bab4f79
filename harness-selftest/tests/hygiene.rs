//! Process and secret hygiene of whole runs, seen from outside: the `selftest-scenarios` binary
//! runs as a child with its own `TMPDIR` (so its scenario roots can be listed) and a unique
//! `SELFTEST_RUN_MARK` in its environment (inherited by everything it starts: its reaper, the
//! agents and their tool commands, so `/proc/*/environ` shows what is left of the run).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The variable marking every process of one run.
const MARK: &str = "SELFTEST_RUN_MARK";
/// The line `killed::waits_to_be_killed` prints when it is ready to be killed.
const KILL_ME: &str = "agent and detached child running; kill me now";
/// The reason `run_skips::skips_with_reason` gives.
const SKIP_REASON: &str = "the model answered in prose instead of calling the tool";

use harness_runtime::scaled;

/// Whether `npm ci` installed real OpenCode: the tests that need it pass vacuously, saying so,
/// on a machine without it (the rest still run on the fixture agent).
fn opencode_installed() -> bool {
    let installed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../node_modules/.bin/opencode")
        .is_file();
    if !installed {
        eprintln!("skipped: opencode not found: run `npm ci`");
    }
    installed
}

fn unique(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{label}{nanos:x}{:x}", std::process::id())
}

/// One run's private places: the scratch dir the scenarios list pids in, the `TMPDIR` that
/// receives the scenario roots, and the mark.
struct Sandbox {
    scratch: tempfile::TempDir,
    tmp: tempfile::TempDir,
    mark: String,
}

struct Output {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Output {
    /// libtest's `test <name> ... <outcome>` line (names are padded when several trials run).
    fn result(&self, name: &str, outcome: &str) -> bool {
        self.stdout.lines().any(|line| {
            line.strip_prefix("test ")
                .and_then(|rest| rest.strip_prefix(name))
                .is_some_and(|rest| rest.trim_start().starts_with(&format!("... {outcome}")))
        })
    }

    fn assert_result(&self, name: &str, outcome: &str) {
        assert!(
            self.result(name, outcome),
            "no `test {name} ... {outcome}`\n{self}"
        );
    }

    fn assert_stdout(&self, needle: &str) {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
    }
}

impl Sandbox {
    fn new() -> Self {
        Sandbox {
            scratch: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            mark: unique("run"),
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_selftest-scenarios"));
        command.args(args);
        for var in [
            "LIVE_STRICT",
            "LIVE_KEEP",
            "LIVE_ISOLATION",
            "LIVE_SNAPSHOT_DIR",
            "LIVE_OPENCODE_BIN",
            "LIVE_FIXTURE_BIN",
            "HARNESS_RUNTIME_ROLE",
            "CANARY_API_KEY",
            "CANARY_PLAIN",
            "INSTA_UPDATE",
            "INSTA_FORCE_PASS",
        ] {
            command.env_remove(var);
        }
        command
            .env("TMPDIR", self.tmp.path())
            .env("SELFTEST_SCRATCH", self.scratch.path())
            .env(MARK, &self.mark);
        command
    }

    fn run(&self, command: &mut Command) -> Output {
        let output = command.output().expect("run selftest-scenarios");
        Output {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// `(label, pid)` lines the scenarios wrote.
    fn pids(&self) -> Vec<(String, u32)> {
        std::fs::read_to_string(self.scratch.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (label, pid) = line.split_once(' ')?;
                Some((label.to_string(), pid.parse().ok()?))
            })
            .collect()
    }

    /// The names in the run's `TMPDIR`, sorted.
    fn tmp_entries(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Live processes carrying this run's mark, as `pid: cmdline`.
    fn marked(&self) -> Vec<String> {
        marked(&self.mark)
    }

    /// Waits up to `ceiling` for no process of the run to remain; the leftovers otherwise. The
    /// reaper exits on its own after its sweep, with no signal this test could wait on, so this
    /// polls `/proc`.
    fn wait_until_gone(&self, ceiling: Duration) -> Result<Duration, Vec<String>> {
        let started = Instant::now();
        loop {
            let left = self.marked();
            if left.is_empty() {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= ceiling {
                return Err(left);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

fn marked(mark: &str) -> Vec<String> {
    let entry = format!("{MARK}={mark}").into_bytes();
    let mut found = Vec::new();
    for dir in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = dir.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        // A zombie's environment reads empty: it is dead, only not yet reaped by its parent.
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|b| *b == 0).any(|e| e == entry.as_slice()) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            found.push(format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ));
        }
    }
    found
}

/// Whether `pid` still runs as a process of the run marked `mark` (a recycled pid does not).
fn runs_with_mark(pid: u32, mark: &str) -> bool {
    let entry = format!("{MARK}={mark}").into_bytes();
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|b| *b == 0).any(|e| e == entry.as_slice()))
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out
}

/// Issue #10: under `LIVE_ISOLATION=shared`, two scenarios lease one server process (a scenario
/// with `isolation = "server"` between them gets its own), each sees only its own sessions and
/// runs its tools in its own workspace (checked inside the scenarios), and after the run no
/// process is left and no root either: the scenarios' nor the shared server's.
#[test]
fn shared_scenarios_lease_one_server_and_leave_nothing() {
    if !opencode_installed() {
        return;
    }
    let sandbox = Sandbox::new();
    let out = sandbox.run(
        sandbox
            .command(&["--test-threads", "1", "shared::"])
            .env("LIVE_ISOLATION", "shared"),
    );
    for name in ["shared::first", "shared::own", "shared::second"] {
        out.assert_result(name, "ok");
    }
    assert_eq!(out.code, Some(0), "\n{out}");
    assert_eq!(
        out.stderr.matches("on a shared server").count(),
        2,
        "\n{out}"
    );

    let pids = sandbox.pids();
    let pid = |label: &str| {
        pids.iter()
            .find(|(l, _)| l == label)
            .map(|(_, pid)| *pid)
            .unwrap_or_else(|| panic!("no {label} pid in {pids:?}\n{out}"))
    };
    assert_eq!(pid("first"), pid("second"), "two shared servers\n{out}");
    assert_ne!(
        pid("own"),
        pid("first"),
        "isolation = \"server\" shared\n{out}"
    );

    if let Err(left) = sandbox.wait_until_gone(scaled(Duration::from_secs(5))) {
        panic!("processes of the run remain:\n{}\n{out}", left.join("\n"));
    }
    let entries = sandbox.tmp_entries();
    assert!(entries.is_empty(), "roots left: {entries:?}\n{out}");
}

/// Issue #3: after a pass, an `Err`, a panic and a timeout (each with an agent and a detached
/// child; one with real OpenCode and its bash tool), no process of the run remains (checked by
/// `hygiene_probe` inside the runner before its reaper could help, and here after the exit), and
/// only the failing scenarios keep their roots.
#[test]
fn every_outcome_leaves_no_process_and_only_the_failing_roots() {
    if !opencode_installed() {
        return;
    }
    let sandbox = Sandbox::new();
    let out = sandbox.run(&mut sandbox.command(&["--test-threads", "1", "hygiene"]));

    out.assert_result("hygiene::fixture_passes", "ok");
    out.assert_result("hygiene::fixture_returns_err", "FAILED");
    out.assert_result("hygiene::fixture_panics", "FAILED");
    out.assert_result("hygiene::fixture_times_out", "FAILED");
    out.assert_result("hygiene::opencode_returns_err", "FAILED");
    out.assert_result("hygiene_probe::no_owned_process_remains", "ok");
    out.assert_stdout("deliberate failure while the agent runs");
    out.assert_stdout("panicked: deliberate panic while the agent runs");
    out.assert_stdout("`hygiene::fixture_times_out` timed out");
    out.assert_stdout("deliberate failure while OpenCode and its tool's sleeps run");
    out.assert_stdout("2 passed; 4 failed");
    assert_eq!(out.code, Some(101), "\n{out}");

    // Every scenario got as far as starting what it should: 4 fixture agents with a detached
    // child each, and OpenCode with two tool sleeps.
    let pids = sandbox.pids();
    let count = |label: &str| pids.iter().filter(|(l, _)| l == label).count();
    assert_eq!(count("server"), 5, "{pids:?}\n{out}");
    assert_eq!(count("detached"), 5, "{pids:?}\n{out}");
    assert_eq!(count("grouped"), 1, "{pids:?}\n{out}");

    if let Err(left) = sandbox.wait_until_gone(scaled(Duration::from_secs(5))) {
        panic!("processes of the run remain:\n{}\n{out}", left.join("\n"));
    }
    for (label, pid) in &pids {
        assert!(
            !runs_with_mark(*pid, &sandbox.mark),
            "{label} {pid} still runs"
        );
    }

    // The roots are `live-<scenario>-<runner pid>-<nonce>`: one per failing scenario, none for
    // the passing one, and nothing else was left in the run's temp dir.
    let entries = sandbox.tmp_entries();
    let failing = [
        "hygiene-fixture_panics",
        "hygiene-fixture_returns_err",
        "hygiene-fixture_times_out",
        "hygiene-opencode_returns_err",
    ];
    assert_eq!(entries.len(), failing.len(), "{entries:?}\n{out}");
    for (entry, scenario) in entries.iter().zip(failing) {
        assert!(
            entry.starts_with(&format!("live-{scenario}-")),
            "{entries:?}\n{out}"
        );
        assert!(
            out.stderr.contains("kept scenario root: ") && out.stderr.contains(entry),
            "the kept root {entry} was not printed\n{out}"
        );
    }
    // The kept roots hold the server logs for the diagnosis.
    for entry in &entries {
        assert!(
            sandbox
                .tmp
                .path()
                .join(entry)
                .join("opencode.stderr.log")
                .is_file(),
            "{entry} has no server log"
        );
    }
}

/// A runner SIGKILLed while its agent and the agent's detached child run: its reaper sweeps them
/// and exits, so nothing of the run is left within 5 s.
#[test]
fn a_sigkilled_runner_leaves_no_process_within_5s() {
    let sandbox = Sandbox::new();
    let mut child = sandbox
        .command(&["--exact", "killed::waits_to_be_killed"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + scaled(Duration::from_secs(60));
    let mut seen = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(KILL_ME) => break,
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the scenario never got ready:\n{}", seen.join("\n"));
            }
        }
    }
    let pids = sandbox.pids();
    assert_eq!(pids.len(), 2, "{pids:?}");
    // The runner, its reaper, the agent and its detached child all carry the mark.
    let before = sandbox.marked();
    assert!(before.len() >= 4, "{before:#?}");

    child.kill().unwrap(); // SIGKILL: no destructor, no `finish`, only the reaper is left
    child.wait().unwrap();
    match sandbox.wait_until_gone(Duration::from_secs(5)) {
        Ok(took) => eprintln!("everything was gone {took:?} after the SIGKILL"),
        Err(left) => panic!(
            "processes remain 5 s after the runner was killed:\n{}",
            left.join("\n")
        ),
    }
    for (label, pid) in &pids {
        assert!(
            !runs_with_mark(*pid, &sandbox.mark),
            "{label} {pid} still runs"
        );
    }
}

/// `live.skip(..)`: reported ignored with its reason (libtest-mimic prints `ignored (reason)`),
/// in every mode.
#[test]
fn live_skip_is_ignored_with_its_reason_even_under_strict() {
    let sandbox = Sandbox::new();
    for strict in [false, true] {
        let mut command = sandbox.command(&["--exact", "run_skips::skips_with_reason"]);
        if strict {
            command.env("LIVE_STRICT", "1");
        }
        let out = sandbox.run(&mut command);
        assert_eq!(out.code, Some(0), "strict={strict}\n{out}");
        out.assert_result(
            "run_skips::skips_with_reason",
            &format!("ignored ({SKIP_REASON})"),
        );
        out.assert_stdout("1 ignored");
    }
}

/// No `LIVE_OPENCODE_BIN`, no `node_modules` above the crate or the cwd, nothing on `PATH`: a
/// requirement skip that says what to do, and a failure under `LIVE_STRICT=1`.
#[test]
fn a_missing_opencode_is_skipped_and_fails_under_strict() {
    let sandbox = Sandbox::new();
    let cwd = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let command = |strict: bool| {
        let mut command = sandbox.command(&["--exact", "run_skips::opencode_missing"]);
        command
            .current_dir(cwd.path())
            .env("PATH", empty_path.path());
        if strict {
            command.env("LIVE_STRICT", "1");
        }
        command
    };
    let skipped = sandbox.run(&mut command(false));
    assert_eq!(skipped.code, Some(0), "\n{skipped}");
    skipped.assert_result(
        "run_skips::opencode_missing",
        "ignored (opencode not found: run `npm ci`)",
    );

    let strict = sandbox.run(&mut command(true));
    assert_eq!(strict.code, Some(101), "\n{strict}");
    strict.assert_result("run_skips::opencode_missing", "FAILED");
    strict.assert_stdout("opencode not found: run `npm ci`");
    strict.assert_stdout("LIVE_STRICT=1");
    assert!(
        sandbox.tmp_entries().is_empty(),
        "{:?}",
        sandbox.tmp_entries()
    );
}

/// Issue #7: two canaries (one secret by its variable's name, one registered with
/// `live.secret`) go through a real turn: the bash tool prints them, the model echoes them,
/// the evidence records both, the scenario fails with both in its error. Neither may appear in
/// the snapshot, stdout, stderr (so the failure message) or any log of the kept root.
#[test]
fn secrets_reach_no_snapshot_output_failure_or_kept_log() {
    if !opencode_installed() {
        return;
    }
    let sandbox = Sandbox::new();
    let snapshots = tempfile::tempdir().unwrap();
    let key = unique("canarykey");
    let plain = unique("canaryword");
    let out = sandbox.run(
        sandbox
            .command(&["--exact", "canary::secrets_never_leak"])
            .env("CANARY_API_KEY", &key)
            .env("CANARY_PLAIN", &plain)
            .env("LIVE_SNAPSHOT_DIR", snapshots.path())
            .env("INSTA_UPDATE", "always"),
    );
    assert_eq!(out.code, Some(101), "\n{out}");
    out.assert_result("canary::secrets_never_leak", "FAILED");
    out.assert_stdout("deliberate failure: the key was [secret], the word was [secret]");
    assert!(
        out.stderr.contains("canaries [secret] and [secret] set"),
        "\n{out}"
    );
    for secret in [&key, &plain] {
        assert!(
            !out.stdout.contains(secret.as_str()) && !out.stderr.contains(secret.as_str()),
            "a canary reached the output\n{out}"
        );
    }

    let snapshot = snapshots.path().join("canary__secrets_never_leak.snap");
    let snapshot = std::fs::read_to_string(&snapshot)
        .unwrap_or_else(|e| panic!("no snapshot written ({e})\n{out}"));
    // The evidence did carry both (the tool output and the text), redacted.
    assert!(
        snapshot.contains("key=[secret] plain=[secret]")
            && snapshot.contains("The key is [secret] and the word is [secret]."),
        "{snapshot}"
    );
    for file in files_under(snapshots.path()) {
        let text = std::fs::read_to_string(&file).unwrap();
        for secret in [&key, &plain] {
            assert!(
                !text.contains(secret.as_str()),
                "{}: {text}",
                file.display()
            );
        }
    }

    let roots = sandbox.tmp_entries();
    assert_eq!(roots.len(), 1, "{roots:?}\n{out}");
    let root = sandbox.tmp.path().join(&roots[0]);
    let logs: Vec<PathBuf> = files_under(&root)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    assert!(
        logs.iter().any(|p| p.ends_with("opencode.stderr.log")),
        "{logs:?}"
    );
    for log in &logs {
        let text = String::from_utf8_lossy(&std::fs::read(log).unwrap()).into_owned();
        for secret in [&key, &plain] {
            assert!(
                !text.contains(secret.as_str()),
                "a canary is in the kept log {}",
                log.display()
            );
        }
    }
}
