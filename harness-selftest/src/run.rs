//! One run of a scenario binary, watched while it runs (its descendants, its progress lines) and
//! read after it ends (exit, output, libtest's result lines).

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::procs::{self, Identity};

/// How often the process tree is sampled while a runner lives.
const SAMPLE: Duration = Duration::from_millis(50);
/// How often a wait on the runner's progress looks again.
const POLL: Duration = Duration::from_millis(20);
/// How long lines a runner wrote before it ended may take to be read.
const PIPE_GRACE: Duration = Duration::from_secs(2);

/// A reader thread's text, complete once `done` fired (EOF: every holder of the pipe is gone).
struct Collected {
    text: Arc<Mutex<String>>,
    done: Receiver<()>,
}

/// Reads `pipe` on a thread of its own, handing every line to `on_line` once it is collected.
fn collect(
    pipe: impl Read + Send + 'static,
    mut on_line: impl FnMut(String) + Send + 'static,
) -> Collected {
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
            on_line(line);
        }
        let _ = done_tx.send(());
    });
    Collected { text, done }
}

/// libtest's `test <name> ... <outcome>` line → `(name, outcome)`.
fn result_line(line: &str) -> Option<(&str, &str)> {
    let (name, outcome) = line.strip_prefix("test ")?.split_once(" ... ")?;
    Some((name.trim(), outcome.trim()))
}

/// Whether `line` reports a scenario's end: `ok`, `FAILED` or `ignored…`.
fn is_result(line: &str) -> bool {
    result_line(line).is_some_and(|(_, outcome)| {
        ["ok", "FAILED", "ignored"]
            .iter()
            .any(|end| outcome.starts_with(end))
    })
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
pub struct Running {
    child: Child,
    /// The runner's pid.
    pub runner: u32,
    started: Instant,
    stdout: Collected,
    stderr: Collected,
    lines: Receiver<String>,
    /// The scenarios whose `started` progress line arrived, in order.
    started_seen: Vec<String>,
    /// How many result lines arrived on stdout so far.
    results_seen: Arc<AtomicUsize>,
    watching: Arc<AtomicBool>,
    watcher: Option<std::thread::JoinHandle<()>>,
    seen: Arc<Mutex<HashSet<Identity>>>,
    peak: Arc<AtomicUsize>,
}

impl Running {
    /// Starts `command` (its stdout and stderr piped) and watches its descendants.
    pub fn start(mut command: Command) -> Running {
        let started = Instant::now();
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start the scenario binary");
        let runner = child.id();
        let results_seen = Arc::new(AtomicUsize::new(0));
        let stdout = {
            let results_seen = results_seen.clone();
            collect(child.stdout.take().expect("piped"), move |line| {
                if is_result(&line) {
                    results_seen.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let (tx, lines) = mpsc::channel();
        let stderr = collect(child.stderr.take().expect("piped"), move |line| {
            let _ = tx.send(line);
        });
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
            results_seen,
            watching,
            watcher: Some(watcher),
            seen,
            peak,
        }
    }

    /// Reads stderr lines until one contains `needle`; kills the runner and panics at `ceiling`
    /// or when stderr ends first.
    pub fn wait_for_line(&mut self, needle: &str, ceiling: Duration) {
        let deadline = Instant::now() + ceiling;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return,
                Ok(line) => self.note_started(&line),
                Err(_) => self.abandon(&format!("no line with {needle:?} within {ceiling:?}")),
            }
        }
    }

    fn note_started(&mut self, line: &str) {
        if let Some(name) = line
            .strip_prefix("[live] ")
            .and_then(|rest| rest.strip_suffix(": started"))
        {
            self.started_seen.push(name.to_string());
        }
    }

    /// Reads the progress lines that arrived; returns how many scenarios said `started` so far.
    pub fn poll_started(&mut self) -> usize {
        while let Ok(line) = self.lines.try_recv() {
            self.note_started(&line);
        }
        self.started_seen.len()
    }

    /// How many scenarios finished so far: the `test … ok|FAILED|ignored` lines the runner
    /// printed.
    pub fn finished_count(&self) -> usize {
        self.results_seen.load(Ordering::Relaxed)
    }

    /// Waits until at least `n` scenarios finished; kills the runner and panics at `ceiling`, or
    /// when the runner ended with fewer (after a grace for its last lines to be read).
    pub fn wait_for_finished(&mut self, n: usize, ceiling: Duration) {
        let deadline = Instant::now() + ceiling;
        let mut ended_at = None;
        while self.finished_count() < n {
            self.poll_started();
            let now = Instant::now();
            if ended_at.is_none() && !self.is_running() {
                ended_at = Some(now);
            }
            if ended_at.is_some_and(|at| now >= at + PIPE_GRACE) {
                let seen = self.finished_count();
                self.abandon(&format!("the runner ended after {seen} of {n} results"));
            }
            if now >= deadline {
                let seen = self.finished_count();
                self.abandon(&format!("{seen} of {n} results within {ceiling:?}"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Whether the runner still runs.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Kills the runner and panics with `why` and what it printed so far.
    pub fn abandon(&mut self, why: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        panic!(
            "{why}\n--- stderr so far ---\n{}",
            self.stderr.text.lock().unwrap()
        );
    }

    /// Sends `signal` to the runner's process group (what a terminal's Ctrl-C does).
    pub fn signal_group(&self, signal: i32) {
        // SAFETY: plain syscall on the group this test created.
        let rc = unsafe { libc::killpg(self.runner as libc::pid_t, signal) };
        assert_eq!(rc, 0, "killpg failed: {}", std::io::Error::last_os_error());
    }

    /// Sends `signal` to the runner alone (`kill -9 <pid>`, the OOM killer).
    pub fn signal(&self, signal: i32) {
        // SAFETY: plain syscall on our own, not yet reaped, child.
        let rc = unsafe { libc::kill(self.runner as libc::pid_t, signal) };
        assert_eq!(rc, 0, "kill failed: {}", std::io::Error::last_os_error());
    }

    /// Waits for the runner's end (SIGKILL and a panic at `ceiling`), then for its output.
    pub fn wait(mut self, ceiling: Duration) -> Finished {
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
            std::thread::sleep(POLL);
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
pub struct Finished {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Everything it printed on stdout (libtest's lines).
    pub stdout: String,
    /// Everything it printed on stderr (the progress lines).
    pub stderr: String,
    /// From its start to its end.
    pub elapsed: Duration,
    /// Its pid.
    pub runner: u32,
    /// Every process seen descending from the runner while it lived.
    pub seen: HashSet<Identity>,
    /// The most descendants seen at once.
    pub peak: usize,
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
    pub fn results(&self) -> BTreeMap<String, String> {
        self.stdout
            .lines()
            .filter_map(result_line)
            .map(|(name, outcome)| (name.to_string(), outcome.to_string()))
            .collect()
    }

    /// The scenarios that printed `started`.
    pub fn started(&self) -> Vec<String> {
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
    pub fn shows(&self, needle: &str) -> bool {
        self.stdout.contains(needle) || self.stderr.contains(needle)
    }

    /// stdout's lines.
    pub fn stdout_lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }

    /// Asserts the exit code.
    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "unexpected exit code\n{self}");
        self
    }

    /// Asserts stdout contains `needle`.
    #[track_caller]
    pub fn assert_stdout(&self, needle: &str) -> &Self {
        assert!(
            self.stdout.contains(needle),
            "stdout lacks {needle:?}\n{self}"
        );
        self
    }

    /// Asserts stderr contains `needle`.
    #[track_caller]
    pub fn assert_stderr(&self, needle: &str) -> &Self {
        assert!(
            self.stderr.contains(needle),
            "stderr lacks {needle:?}\n{self}"
        );
        self
    }

    /// Asserts stdout or stderr contains each of `needles`.
    #[track_caller]
    pub fn assert_shows(&self, needles: &[&str]) -> &Self {
        for needle in needles {
            assert!(self.shows(needle), "no {needle:?} in the output\n{self}");
        }
        self
    }

    /// Asserts neither stdout nor stderr contains `needle`.
    #[track_caller]
    pub fn assert_nowhere(&self, needle: &str) -> &Self {
        assert!(!self.shows(needle), "output contains {needle:?}\n{self}");
        self
    }

    /// Asserts libtest reported `name` with an outcome starting with `outcome` (`ok`, `FAILED`,
    /// `ignored`, `ignored (<reason>)`).
    #[track_caller]
    pub fn assert_result(&self, name: &str, outcome: &str) -> &Self {
        let results = self.results();
        assert!(
            results.get(name).is_some_and(|o| o.starts_with(outcome)),
            "no `test {name} ... {outcome}` line\n{self}"
        );
        self
    }
}
