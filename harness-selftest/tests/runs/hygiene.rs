//! Process and secret hygiene of whole runs, seen from outside: the `selftest-scenarios` binary
//! runs as a child with its own `TMPDIR` (so its scenario roots can be listed) and a unique
//! `SELFTEST_RUN_MARK` in its environment (inherited by everything it starts: its reaper, the
//! agents and their tool commands, so `/proc/*/environ` shows what is left of the run).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness_runtime::scaled;
use harness_selftest::files::files_under;
use harness_selftest::prerequisites::{self, Prerequisite::OpenCode, Test};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::{Sandbox, unique};
use harness_selftest::test;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The line `killed::waits_to_be_killed` prints when it is ready to be killed.
const KILL_ME: &str = "agent and detached child running; kill me now";
/// The reason `run_skips::skips_with_reason` gives.
const SKIP_REASON: &str = "the model answered in prose instead of calling the tool";
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(600);

pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(shared_scenarios_lease_one_server_and_leave_nothing).needs(OpenCode),
        test!(a_shared_server_that_dies_fails_only_its_scenario).needs(OpenCode),
        test!(a_failure_retires_a_shared_server_its_neighbour_still_uses).needs(OpenCode),
        test!(every_outcome_leaves_no_process_and_only_the_failing_roots).needs(OpenCode),
        test!(a_sigkilled_runner_leaves_no_process_within_5s),
        test!(live_skip_is_ignored_with_its_reason_even_under_strict),
        test!(a_missing_opencode_is_skipped_and_fails_under_ci_or_strict),
        test!(secrets_reach_no_snapshot_output_failure_or_kept_log).needs(OpenCode),
        test!(a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict),
        test!(the_progress_line_says_whether_agents_are_confined),
    ]
}

/// Runs `args` of the scenario binary in `sandbox` (plus `env`) to its end.
fn run(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let mut command = sandbox.command(SCENARIOS, args);
    command.envs(env.iter().copied());
    sandbox.run(command, scaled(RUN_CEILING))
}

/// The pid the run's scenarios recorded under `label`; panics naming what they recorded.
fn recorded_pid(sandbox: &Sandbox, label: &str, out: &Finished) -> u32 {
    let pids = sandbox.pids();
    pids.iter()
        .find(|(l, _)| l == label)
        .map(|(_, pid)| *pid)
        .unwrap_or_else(|| panic!("no {label} pid in {pids:?}\n{out}"))
}

/// Waits up to `ceiling` for no process of the run to remain, then checks no recorded process
/// still runs; panics with what is left otherwise.
fn assert_clean(sandbox: &Sandbox, finished: &Finished, ceiling: Duration) -> Duration {
    let took = sandbox
        .wait_until_clean(finished, ceiling)
        .unwrap_or_else(|left| {
            panic!(
                "processes of the run remain {ceiling:?} after it ended:\n{}\n{finished}",
                left.join("\n")
            )
        });
    let running = sandbox.recorded_still_running();
    assert!(running.is_empty(), "still running: {running:?}\n{finished}");
    took
}

/// Under `LIVE_ISOLATION=shared`, two scenarios lease one server process (a scenario
/// with `isolation = "server"` between them gets its own), the second in the first's warm
/// workspace, each sees only its own sessions and files and runs its tools in its own
/// workspace (checked inside the scenarios), and after the run no process is left and no root
/// either: the scenarios', the warm workspaces' nor the shared server's. The ask `first` left
/// unanswered does not cost `second` a new boot of the workspace's instance: the seat went back
/// warm (the release's note in the run report).
fn shared_scenarios_lease_one_server_and_leave_nothing() {
    let sandbox = Sandbox::new();
    let report = tempfile::tempdir().unwrap();
    let out = run(
        &sandbox,
        &["--test-threads", "1", "shared::"],
        &[
            ("LIVE_ISOLATION", "shared"),
            ("LIVE_REPORT", report.path().to_str().unwrap()),
        ],
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
    // `second` has `first`'s config: it gets `first`'s workspace, reset, with its instance
    // still booted (the saving warm workspaces are for; it finds none of `first`'s files or
    // sessions, checked inside).
    assert_eq!(
        out.stderr
            .matches("on a shared server (warm workspace)")
            .count(),
        1,
        "\n{out}"
    );

    let pid = |label: &str| recorded_pid(&sandbox, label, &out);
    assert_eq!(pid("first"), pid("second"), "two shared servers\n{out}");
    let first = files_under(report.path())
        .into_iter()
        .find(|file| file.to_string_lossy().ends_with("shared__first.json"))
        .unwrap_or_else(|| panic!("no report of shared::first\n{out}"));
    let first = std::fs::read_to_string(&first).unwrap();
    assert!(
        first.contains("seat released") && first.contains("Warm (instance holds []"),
        "shared::first's seat was not handed on warm: {}\n{out}",
        first.find("seat released").map_or_else(
            || "no release noted".to_owned(),
            |at| first[at..].chars().take(200).collect()
        )
    );
    assert_ne!(
        pid("own"),
        pid("first"),
        "isolation = \"server\" shared\n{out}"
    );

    assert_clean(&sandbox, &out, scaled(Duration::from_secs(5)));
    let entries = sandbox.roots();
    assert!(entries.is_empty(), "roots left: {entries:?}\n{out}");
}

/// Under the default isolation, a shared server killed mid-scenario fails that
/// scenario only; the next scenario gets a new server (the dead one is retired) and passes, and
/// nothing of either server is left running. The failed scenario's root and the dead server's
/// are kept, in the pool's directory.
fn a_shared_server_that_dies_fails_only_its_scenario() {
    let sandbox = Sandbox::new();
    let out = run(&sandbox, &["--test-threads", "1", "shared_death::"], &[]);
    out.assert_result("shared_death::kills_its_server", "FAILED");
    out.assert_result("shared_death::next_leases_a_new_server", "ok");
    out.assert_stdout("the shared server died");
    out.assert_stdout("1 passed; 1 failed");
    let pid = |label: &str| recorded_pid(&sandbox, label, &out);
    assert_ne!(
        pid("dead"),
        pid("next"),
        "the dead server was leased again\n{out}"
    );
    assert_clean(&sandbox, &out, scaled(Duration::from_secs(5)));
    let roots = sandbox.roots();
    assert!(
        roots.len() == 1 && roots[0].starts_with("live-shared-pool-"),
        "expected only the pool's directory (with the kept roots): {roots:?}\n{out}"
    );
    out.assert_stderr("kept scenario root:");
}

/// Two scenarios lease one shared server at once; the first fails, which retires the server,
/// yet the second, which has its turn only after that failure was released, passes on it: a
/// retired server stops once its last lessee is done. Nothing of it is left running after the
/// run, and the failed scenario's root is kept.
fn a_failure_retires_a_shared_server_its_neighbour_still_uses() {
    let sandbox = Sandbox::new();
    let out = run(&sandbox, &["--test-threads", "2", "shared_beside::"], &[]);
    out.assert_result("shared_beside::fails_beside_its_neighbour", "FAILED");
    out.assert_result("shared_beside::outlives_its_failed_neighbour", "ok");
    out.assert_stdout("failed on purpose beside its neighbour");
    out.assert_stdout("1 passed; 1 failed");
    let pid = |label: &str| recorded_pid(&sandbox, label, &out);
    assert_eq!(
        pid("failing"),
        pid("neighbour"),
        "the two scenarios did not share a server\n{out}"
    );
    assert_clean(&sandbox, &out, scaled(Duration::from_secs(5)));
    out.assert_stderr("kept scenario root:");
}

/// After a pass, an `Err`, a panic and a timeout (each with an agent and a detached
/// child; one with real OpenCode and its bash tool), no process of the run remains (checked by
/// `hygiene_probe` inside the runner before its reaper could help, and here after the exit), and
/// only the failing scenarios keep their roots.
fn every_outcome_leaves_no_process_and_only_the_failing_roots() {
    let sandbox = Sandbox::new();
    // Servers of their own: the roots below are each scenario's own (a shared server's
    // failing scenario is covered by `a_shared_server_that_dies_fails_only_its_scenario`).
    let out = run(
        &sandbox,
        &["--test-threads", "1", "hygiene"],
        &[("LIVE_ISOLATION", "server")],
    );

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
    assert_eq!(sandbox.count("server"), 5, "{pids:?}\n{out}");
    assert_eq!(sandbox.count("detached"), 5, "{pids:?}\n{out}");
    assert_eq!(sandbox.count("grouped"), 1, "{pids:?}\n{out}");

    assert_clean(&sandbox, &out, scaled(Duration::from_secs(5)));

    // The roots are `live-<scenario>-<runner pid>-<nonce>`: one per failing scenario, none for
    // the passing one, and nothing else was left in the run's temp dir.
    let entries = sandbox.roots();
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
fn a_sigkilled_runner_leaves_no_process_within_5s() {
    let sandbox = Sandbox::new();
    let mut running =
        sandbox.start(sandbox.command(SCENARIOS, &["--exact", "killed::waits_to_be_killed"]));
    running.wait_for_line(KILL_ME, scaled(Duration::from_secs(60)));
    let pids = sandbox.pids();
    assert_eq!(pids.len(), 2, "{pids:?}");
    // The runner, its reaper, the agent and its detached child all carry the mark.
    let before = sandbox.survivors(running.runner, &Default::default());
    assert!(before.len() >= 4, "{before:#?}");

    // SIGKILL: no destructor, no `finish`, only the reaper is left.
    let killed = Instant::now();
    running.signal(libc::SIGKILL);
    // Its output ends when the last holder of its pipes is gone.
    let finished = running.wait(scaled(Duration::from_secs(10)));
    let within = Duration::from_secs(5);
    if let Err(left) = sandbox.wait_until_clean(&finished, within.saturating_sub(killed.elapsed()))
    {
        panic!(
            "processes remain 5 s after the runner was killed:\n{}",
            left.join("\n")
        );
    }
    let took = killed.elapsed();
    assert!(
        took <= within,
        "the run was gone only {took:?} after the SIGKILL"
    );
    eprintln!("everything was gone {took:?} after the SIGKILL");
    let running = sandbox.recorded_still_running();
    assert!(running.is_empty(), "still running: {running:?}");
}

/// `live.skip(..)`: reported ignored with its reason (libtest-mimic prints `ignored (reason)`),
/// in every mode.
fn live_skip_is_ignored_with_its_reason_even_under_strict() {
    let sandbox = Sandbox::new();
    for strict in [false, true] {
        let strictness: &[(&str, &str)] = if strict { &[("LIVE_STRICT", "1")] } else { &[] };
        let out = run(
            &sandbox,
            &["--exact", "run_skips::skips_with_reason"],
            strictness,
        );
        assert_eq!(out.code, Some(0), "strict={strict}\n{out}");
        out.assert_result(
            "run_skips::skips_with_reason",
            &format!("ignored ({SKIP_REASON})"),
        );
        out.assert_stdout("1 ignored");
    }
}

/// No `LIVE_OPENCODE_BIN`, no `node_modules` above the crate or the cwd, nothing on `PATH`: a
/// missing prerequisite, skipped saying what to do, and a failure under `CI` or `LIVE_STRICT=1`.
fn a_missing_opencode_is_skipped_and_fails_under_ci_or_strict() {
    let sandbox = Sandbox::new();
    let cwd = tempfile::tempdir().unwrap();
    let empty_path = tempfile::tempdir().unwrap();
    let command = |env: &[(&str, &str)]| {
        let mut command = sandbox.command(SCENARIOS, &["--exact", "run_skips::opencode_missing"]);
        command
            .current_dir(cwd.path())
            .env("PATH", empty_path.path())
            // The machine's OpenCode reaches sandboxed runs; this one must find none.
            .env_remove("LIVE_OPENCODE_BIN")
            .envs(env.iter().copied());
        sandbox.run(command, scaled(RUN_CEILING))
    };
    let skipped = command(&[("CI", "false")]);
    assert_eq!(skipped.code, Some(0), "\n{skipped}");
    skipped.assert_result(
        "run_skips::opencode_missing",
        "ignored (opencode not found: run `npm ci`)",
    );

    for (name, value) in [("LIVE_STRICT", "1"), ("CI", "true")] {
        let strict = command(&[(name, value)]);
        assert_eq!(strict.code, Some(101), "\n{strict}");
        strict.assert_result("run_skips::opencode_missing", "FAILED");
        strict.assert_stdout("opencode not found: run `npm ci`");
        strict.assert_stdout(&format!(
            "({name}={value} makes a missing prerequisite a failure)"
        ));
    }
    assert!(sandbox.roots().is_empty(), "{:?}", sandbox.roots());
}

/// Two canaries (one secret by its variable's name, one registered with
/// `live.secret`) go through a real turn: the bash tool prints them, the model echoes them,
/// the evidence records both, the scenario fails with both in its error. Neither may appear in
/// the snapshot, stdout, stderr (so the failure message) or any log of the kept root.
fn secrets_reach_no_snapshot_output_failure_or_kept_log() {
    let sandbox = Sandbox::new();
    let snapshots = tempfile::tempdir().unwrap();
    let key = unique("canarykey");
    let plain = unique("canaryword");
    let out = run(
        &sandbox,
        &["--exact", "canary::secrets_never_leak"],
        &[
            ("CANARY_API_KEY", &key),
            ("CANARY_PLAIN", &plain),
            ("LIVE_SNAPSHOT_DIR", snapshots.path().to_str().unwrap()),
            ("INSTA_UPDATE", "always"),
        ],
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

    let roots = sandbox.roots();
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

/// The tests above that need OpenCode, where it is missing (here: `LIVE_OPENCODE_BIN` names no
/// file): skipped with the reason, flagged ignored when listed (for nextest), and failed under
/// `CI` or `LIVE_STRICT=1`, without running.
fn a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict() {
    prerequisites::assert_skipped_without_opencode(
        "hygiene::shared_scenarios_lease_one_server_and_leave_nothing",
    );
}

/// Each agent's progress line says its sandbox — `landlock ABI n` where the kernel
/// has Landlock, else a warning (and under `LIVE_STRICT=1` a failure) — and `LIVE_SANDBOX=0`
/// turns it off without either, also under `LIVE_STRICT=1`.
fn the_progress_line_says_whether_agents_are_confined() {
    let scenario = "hygiene::fixture_passes";
    let args = ["--exact", scenario];
    let strict = run(&Sandbox::new(), &args, &[("LIVE_STRICT", "1")]);
    let confined = format!("{scenario}: sandbox: landlock ABI ");
    let warned = format!("{scenario}: sandbox: off — warning: ");
    if strict.stderr.contains(&confined) {
        strict.assert_result(scenario, "ok");
    } else {
        // No Landlock here: strict fails the agent, and without strict the run warns.
        strict.assert_result(scenario, "FAILED");
        strict.assert_stdout("the agent's sandbox is unavailable");
        let lax = run(&Sandbox::new(), &args, &[]);
        lax.assert_result(scenario, "ok");
        lax.assert_stderr(&warned);
    }
    let off = run(
        &Sandbox::new(),
        &args,
        &[("LIVE_SANDBOX", "0"), ("LIVE_STRICT", "1")],
    );
    off.assert_result(scenario, "ok");
    off.assert_stderr(&format!("{scenario}: sandbox: off (LIVE_SANDBOX=0)"));
    assert!(!off.stderr.contains(&confined), "\n{off}");
    assert!(!off.stderr.contains("warning"), "\n{off}");
}
