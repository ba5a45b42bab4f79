//! A scenario binary's run in a sandbox: the caller's environment scrubbed, a private `TMPDIR`
//! (the scenario roots), a scratch dir (the pids the scenarios recorded) and a run mark in the
//! environment that every process of the run inherits.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use harness_runtime::scaled;
use harness_runtime::testing::OWNER_ENV;

use crate::procs::{self, Identity};
use crate::run::{Finished, Running};
use crate::scratch;

/// The variable marking every process of one run (inherited by the reaper, the agents, their
/// tools and daemons).
pub const RUN_MARK: &str = "SELFTEST_RUN_MARK";
/// How long [`Sandbox::run_clean`] waits, before scaling, for a run's processes to end after it.
const CLEAN_CEILING: Duration = Duration::from_secs(10);

/// Prefixes of the caller's variables that would change what a scenario binary does: the
/// harness's settings, insta's, nextest's (a self-test run under nextest must not list or run its
/// child as nextest would), and those the self-test scenarios read.
const SCRUBBED_PREFIXES: &[&str] = &[
    "LIVE_",
    "NEXTEST_",
    "INSTA_",
    "HARNESS_",
    "SELFTEST_",
    "RELIABILITY_",
    "CANARY_",
];
/// Single variables of the same kind.
const SCRUBBED: &[&str] = &[
    "CI",
    "RUST_BACKTRACE",
    "OPENCODE_CONFIG_CONTENT",
    "TEST_OLLAMA_MODEL",
];
/// What the machine is rather than what the run does, so it reaches the binary: where OpenCode
/// is (the tests' own prerequisite check honours it too) and how slow the machine is.
const KEPT: &[&str] = &["LIVE_OPENCODE_BIN", "LIVE_TIMEOUT_SCALE"];

/// `program args…` with none of the caller's variables that would change what it does (the one
/// scrub list of the self-tests), stdin closed and output piped. A test sets what it tests.
pub fn scrubbed_command(program: impl AsRef<OsStr>, args: &[&str]) -> Command {
    let mut command = Command::new(program);
    command.args(args);
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        let scrubbed =
            SCRUBBED.contains(&name) || SCRUBBED_PREFIXES.iter().any(|p| name.starts_with(p));
        if scrubbed && !KEPT.contains(&name) {
            command.env_remove(name);
        }
    }
    // A self-test's run is not the user's: it writes no run report over theirs (a test of the
    // report sets its own folder).
    command.env("LIVE_REPORT", "off");
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Puts `command` in a process group of its own, as a shell does with a terminal's foreground
/// job: a Ctrl-C (SIGINT to the group) then reaches it and everything it starts in the group.
pub fn in_own_group(command: &mut Command) {
    command.process_group(0);
    // As under a terminal: a caller started in the background (`cmd &` in a script, CI
    // wrappers) hands down SIGINT and SIGQUIT ignored, and the Ctrl-C would then interrupt
    // nothing.
    // SAFETY: `signal` is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
            Ok(())
        });
    }
}

/// A string no other run of any process shares.
pub fn unique(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is past 1970")
        .as_nanos();
    format!("{label}{nanos:x}{:x}", std::process::id())
}

/// Runs `program`'s `args` in a fresh [`Sandbox`] with `env` and nothing else of this process's
/// settings, as [`Sandbox::run_clean`] does: nothing of the run may be left running.
pub fn run_sandboxed(
    program: impl AsRef<OsStr>,
    args: &[&str],
    env: &[(&str, &str)],
    ceiling: Duration,
) -> Finished {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(program, args);
    command.envs(env.iter().copied());
    sandbox.run_clean(command, ceiling)
}

/// A run's private places and mark.
pub struct Sandbox {
    /// Where the scenarios record pids ([`scratch::SCRATCH`]).
    pub scratch: tempfile::TempDir,
    /// The run's `TMPDIR`: the scenario roots land here.
    pub tmp: tempfile::TempDir,
    /// The value of [`RUN_MARK`] in every process of the run.
    pub mark: String,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Sandbox {
    /// Fresh temp dirs and a unique mark.
    pub fn new() -> Self {
        Sandbox {
            scratch: tempfile::tempdir().expect("a temp dir for the scratch"),
            tmp: tempfile::tempdir().expect("a temp dir for the run's TMPDIR"),
            mark: unique("run"),
        }
    }

    /// [`scrubbed_command`] with the sandbox's `TMPDIR`, scratch dir and mark.
    pub fn command(&self, program: impl AsRef<OsStr>, args: &[&str]) -> Command {
        let mut command = scrubbed_command(program, args);
        command
            .env("TMPDIR", self.tmp.path())
            .env(scratch::SCRATCH, self.scratch.path())
            .env(RUN_MARK, &self.mark);
        command
    }

    /// `(label, pid)` lines the scenarios and agents recorded.
    pub fn pids(&self) -> Vec<(String, u32)> {
        scratch::recorded(self.scratch.path())
    }

    /// How many pids were recorded under `label`.
    pub fn count(&self, label: &str) -> usize {
        self.pids().iter().filter(|(l, _)| l == label).count()
    }

    /// The recorded processes that still run as processes of this run (a recycled pid does not
    /// carry the mark).
    pub fn recorded_still_running(&self) -> Vec<(String, u32)> {
        let mark = format!("{RUN_MARK}={}", self.mark).into_bytes();
        self.pids()
            .into_iter()
            .filter(|(_, pid)| procs::environ_has(*pid, |e| e == mark.as_slice()))
            .collect()
    }

    /// The names in the run's `TMPDIR`, sorted.
    pub fn roots(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.tmp.path())
            .expect("the run's TMPDIR")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    /// Live processes of the run: those carrying its mark or an owner mark of its runner, and
    /// those seen descending from the runner while it lived (by identity, so a recycled pid is
    /// not one of them).
    pub fn survivors(&self, runner: u32, seen: &HashSet<Identity>) -> Vec<String> {
        let mark = format!("{RUN_MARK}={}", self.mark).into_bytes();
        let owner = format!("{OWNER_ENV}=live-{runner}-").into_bytes();
        procs::table()
            .into_iter()
            .filter(|p| {
                seen.contains(&(p.pid, p.start))
                    || procs::environ_has(p.pid, |e| e == mark.as_slice() || e.starts_with(&owner))
            })
            .map(|p| procs::describe(p.pid))
            .collect()
    }

    /// Waits up to `ceiling` for no process of the run to remain: the reaper exits on its own
    /// after its sweep, with nothing a test could wait on, so this polls `/proc`.
    pub fn wait_until_clean(
        &self,
        finished: &Finished,
        ceiling: Duration,
    ) -> Result<Duration, Vec<String>> {
        let started = Instant::now();
        loop {
            let left = self.survivors(finished.runner, &finished.seen);
            if left.is_empty() {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= ceiling {
                return Err(left);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Starts `command` and watches it.
    pub fn start(&self, command: Command) -> Running {
        Running::start(command)
    }

    /// Runs `command` to its end (within `ceiling`).
    pub fn run(&self, command: Command, ceiling: Duration) -> Finished {
        Running::start(command).wait(ceiling)
    }

    /// [`run`](Self::run), then [`wait_until_clean`](Self::wait_until_clean): panics naming the
    /// processes of the run still running 10 s (scaled) after it ended.
    pub fn run_clean(&self, command: Command, ceiling: Duration) -> Finished {
        let finished = self.run(command, ceiling);
        if let Err(left) = self.wait_until_clean(&finished, scaled(CLEAN_CEILING)) {
            panic!(
                "processes of the run remain:\n{}\n{finished}",
                left.join("\n")
            );
        }
        finished
    }
}
