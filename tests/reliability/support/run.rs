//! One run of a scenario binary in its own sandbox, watched while it runs and after it ends.

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::procs::{self, Identity};

/// The scenario binary of this target.
pub(crate) const SCENARIOS: &str = env!("CARGO_BIN_EXE_reliability-scenarios");
/// A suite with two scenarios of one name.
pub(crate) const DUPLICATES: &str = env!("CARGO_BIN_EXE_reliability-duplicates");

/// The variable marking every process of one run (inherited by the reaper, the agents, their
/// tools and daemons).
const MARK: &str = "RELIABILITY_RUN_MARK";

/// Variables of the caller's environment that would change what the binaries do.
const CLEARED: &[&str] = &[
    "LIVE_STRICT",
    "LIVE_KEEP",
    "LIVE_SNAPSHOT_DIR",
    "LIVE_OPENCODE_BIN",
    "LIVE_FIXTURE_BIN",
    "HARNESS_RUNTIME_ROLE",
    "INSTA_UPDATE",
    "INSTA_FORCE_PASS",
    "TEST_OLLAMA_MODEL",
    "OPENCODE_CONFIG_CONTENT",
    "RELIABILITY_OPENCODE",
    "RELIABILITY_DAEMON",
    "RELIABILITY_SCRATCH",
];

/// How often the process tree is sampled while a runner lives.
const SAMPLE: Duration = Duration::from_millis(50);

fn unique(label: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{label}{nanos:x}{:x}", std::process::id())
}

/// A run's private places and mark.
pub(crate) struct Sandbox {
    pub(crate) scratch: tempfile::TempDir,
    pub(crate) tmp: tempfile::TempDir,
    pub(crate) mark: String,
}

impl Sandbox {
    pub(crate) fn new() -> Self {
        Sandbox {
            scratch: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            mark: unique("reliability"),
        }
    }

    /// `program args…` with the sandbox's `TMPDIR`, scratch dir and mark, in a process group of
    /// its own (as `cargo test` runs in a terminal's foreground group: a Ctrl-C reaches the group).
    pub(crate) fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut command = Command::new(program);
        command.args(args).process_group(0);
        // As under a terminal: a caller started in the background (`cmd &` in a script, CI
        // wrappers) hands down SIGINT and SIGQUIT ignored, and the Ctrl-C run would then
        // interrupt nothing.
        // SAFETY: `signal` is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        for var in CLEARED {
            command.env_remove(var);
        }
        command
            .env("TMPDIR", self.tmp.path())
            .env("RELIABILITY_SCRATCH", self.scratch.path())
            .env(MARK, &self.mark)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// `(label, pid)` lines the scenarios and agents recorded.
    pub(crate) fn pids(&self) -> Vec<(String, u32)> {
        std::fs::read_to_string(self.scratch.path().join("pids"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let (label, pid) = line.split_once(' ')?;
                Some((label.to_string(), pid.parse().ok()?))
            })
            .collect()
    }

    /// How many pids were recorded under `label`.
    pub(crate) fn count(&self, label: &str) -> usize {
        self.pids().iter().filter(|(l, _)| l == label).count()
    }

    /// The names in the run's `TMPDIR`, sorted.
    pub(crate) fn roots(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Live processes of the run: those carrying its mark or an owner mark of its runner, and
    /// those seen descending from the runner while it lived (by identity, so a recycled pid is
    /// not one of them).
    pub(crate) fn survivors(&self, runner: u32, seen: &HashSet<Identity>) -> Vec<String> {
        let mark = format!("{MARK}={}", self.mark).into_bytes();
        let owner = format!("LIVE_HARNESS_OWNER=live-{runner}-").into_bytes();
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
    /// after its sweep, with nothing this test could wait on, so this polls `/proc`.
    pub(crate) fn wait_until_clean(
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
    pub(crate) fn start(&self, mut command: Command) -> Running {
        let started = Instant::now();
        let mut child = command.spawn().expect("start the scenario binary");
        let runner = child.id();
        let stdout = collect(child.stdout.take().unwrap(), None);
        let (tx, lines) = mpsc::channel();
        let stderr = collect(child.stderr.take().unwrap(), Some(tx));
        let watching = Arc::new(AtomicBool::new(true));
        let seen = Arc::new(Mutex::new(HashSet::new()));
        let peak = Arc::new(AtomicUsize::new(0));
        let watcher = {
            let (watching, seen, peak) = (watching.clone(), seen.clone(), peak.clone());
            std::thread::spawn(move || {
                while watching.load(Ordering::Relaxed) {
                    let now = procs::descendants(runner, &procs::table());
                    peak.fetch_max(now.len(), Ordering::Relaxed);
                    seen.lock().unwrap().extend(now);
                    std::thread::sleep(SAMPLE);
                }
            })
        };
        Running {
            child,
            runner,
            started,
            stdout,
            stderr,
            lines,
            started_seen: Vec::new(),
            watching,
            watcher: Some(watcher),
            seen,
            peak,
        }
    }

    /// Runs `command` to its end (within `ceiling`).
    pub(crate) fn run(&self, command: Command, ceiling: Duration) -> Finished {
        self.start(command).wait(ceiling)
    }
}

/// A reader thread's text, complete once `done` fired (EOF: every holder of the pipe is gone).
struct Collected {
    text: Arc<Mutex<String>>,
    done: Receiver<()>,
}

fn collect(pipe: impl Read + Send + 'static, lines: Option<mpsc::Sender<String>>) -> Collected {
    let text = Arc::new(Mutex::new(String::new()));
    let (done_tx, done) = mpsc::channel();
    let shared = text.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines() {
            let Ok(line) = line else { break };
            {
                let mut text = shared.lock().unwrap();
                text.push_str(&line);
                text.push('\n');
            }
            if let Some(lines) = &lines {
                let _ = lines.send(line);
            }
        }
        let _ = done_tx.send(());
    });
    Collected { text, done }
}

impl Collected {
    /// The whole text, or what arrived when `ceiling` passed (a survivor holds the pipe then;
    /// the survivor check reports it).
    fn finish(self, ceiling: Duration) -> String {
        let _ = self.done.recv_timeout(ceiling);
        self.text.lock().unwrap().clone()
    }
}

/// A runner that runs.
pub(crate) struct Running {
    child: Child,
    pub(crate) runner: u32,
    started: Instant,
    stdout: Collected,
    stderr: Collected,
    lines: Receiver<String>,
    /// The scenarios whose `started` progress line arrived, in order.
    started_seen: Vec<String>,
    watching: Arc<AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
    seen: Arc<Mutex<HashSet<Identity>>>,
    peak: Arc<AtomicUsize>,
}

impl Running {
    /// Reads the progress lines that arrived; returns how many scenarios said `started` so far.
    pub(crate) fn poll_started(&mut self) -> usize {
        while let Ok(line) = self.lines.try_recv() {
            if let Some(name) = line
                .strip_prefix("[live] ")
                .and_then(|rest| rest.strip_suffix(": started"))
            {
                self.started_seen.push(name.to_string());
            }
        }
        self.started_seen.len()
    }

    /// Whether the runner still runs.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the runner and panics with `why` and what it printed so far.
    pub(crate) fn abandon(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!(
            "{why}\n--- stderr so far ---\n{}",
            self.stderr.text.lock().unwrap()
        );
    }

    /// Sends `signal` to the runner's process group (what a terminal's Ctrl-C does).
    pub(crate) fn signal_group(&self, signal: i32) {
        // SAFETY: plain syscall on the group this test created.
        let rc = unsafe { libc::killpg(self.runner as libc::pid_t, signal) };
        assert_eq!(rc, 0, "killpg failed: {}", std::io::Error::last_os_error());
    }

    /// Sends `signal` to the runner alone (`kill -9 <pid>`, the OOM killer).
    pub(crate) fn signal(&self, signal: i32) {
        // SAFETY: plain syscall on our own, not yet reaped, child.
        let rc = unsafe { libc::kill(self.runner as libc::pid_t, signal) };
        assert_eq!(rc, 0, "kill failed: {}", std::io::Error::last_os_error());
    }

    /// Waits for the runner's end (SIGKILL and a panic at `ceiling`), then for its output.
    pub(crate) fn wait(mut self, ceiling: Duration) -> Finished {
        let deadline = Instant::now() + ceiling;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the runner did not end within {ceiling:?}:\n{}",
                    self.stderr.text.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let elapsed = self.started.elapsed();
        self.watching.store(false, Ordering::Relaxed);
        if let Some(watcher) = self.watcher.take() {
            watcher.join().unwrap();
        }
        let pipes = harness_runtime::scaled(Duration::from_secs(10));
        let seen = self.seen.lock().unwrap().clone();
        Finished {
            code: status.code(),
            signal: status.signal(),
            stdout: self.stdout.finish(pipes),
            stderr: self.stderr.finish(pipes),
            elapsed,
            runner: self.runner,
            seen,
            peak: self.peak.load(Ordering::Relaxed),
        }
    }
}

/// A runner that ended.
pub(crate) struct Finished {
    pub(crate) code: Option<i32>,
    pub(crate) signal: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) elapsed: Duration,
    pub(crate) runner: u32,
    /// Every process seen descending from the runner while it lived.
    pub(crate) seen: HashSet<Identity>,
    /// The most descendants seen at once.
    pub(crate) peak: usize,
}

impl std::fmt::Display for Finished {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code: {:?}, signal: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.signal, self.stdout, self.stderr
        )
    }
}

impl Finished {
    /// libtest's `test <name> ... <outcome>` lines: name → `ok`, `FAILED`, `ignored…`.
    pub(crate) fn results(&self) -> BTreeMap<String, String> {
        self.stdout
            .lines()
            .filter_map(|line| {
                let (name, outcome) = line.strip_prefix("test ")?.split_once(" ... ")?;
                Some((name.trim().to_string(), outcome.trim().to_string()))
            })
            .collect()
    }

    /// The scenarios that printed `started`.
    pub(crate) fn started(&self) -> Vec<String> {
        self.stderr
            .lines()
            .filter_map(|line| {
                line.strip_prefix("[live] ")?
                    .strip_suffix(": started")
                    .map(str::to_string)
            })
            .collect()
    }

    /// Whether stdout or stderr contains `needle`.
    pub(crate) fn shows(&self, needle: &str) -> bool {
        self.stdout.contains(needle) || self.stderr.contains(needle)
    }
}
