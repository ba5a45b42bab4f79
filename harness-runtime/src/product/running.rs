//! One started product: spawn (confined or not), wait, output, stop, and its verdict at the
//! scenario's end.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::capture::{self, Capture, Drained, Sinks, Stream};
use super::{
    ACP_AGENT_COMMAND_ENV, AGENT_DIRECTORY_ENV, AGENT_URL_ENV, ProductCommand, ProductError, policy,
};
use crate::opencode::Agent;
use crate::process::{self, OwnedChild};
use crate::redact::Redactor;
use crate::sandbox::{self, SpawnError};
use crate::timeline::{self, Lane};

/// Between SIGTERM and SIGKILL when a product is stopped, before scaling.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long the reap may take after SIGKILL, before scaling.
const STOP_CEILING: Duration = Duration::from_secs(10);
/// How long an exit waits for the output pipes to drain (a detached descendant may hold them).
const DRAIN_CEILING: Duration = Duration::from_secs(2);
/// Lines of output a failure message carries.
const FAILURE_TAIL: usize = 40;

/// Where a product runs: how it reaches its agent (the variables it is given, the port it may
/// connect to, what else it may read), the agent's workspace and root.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) env: Vec<(&'static str, std::ffi::OsString)>,
    pub(crate) port: u16,
    /// Beyond its own program: what reaching the agent needs read (an agent command).
    pub(crate) read_only: Vec<PathBuf>,
    pub(crate) workspace: PathBuf,
    pub(crate) root: PathBuf,
}

impl Target {
    /// The addresses and directories `agent` gives its products.
    pub(crate) fn of(agent: &Agent) -> Self {
        let url = agent_url(agent);
        let port = reqwest::Url::parse(&url)
            .ok()
            .and_then(|url| url.port())
            .unwrap_or_else(|| agent.port());
        Target {
            env: vec![(AGENT_URL_ENV, url.into())],
            port,
            read_only: Vec::new(),
            workspace: agent.workspace().to_path_buf(),
            root: agent.root().to_path_buf(),
        }
    }

    /// What a product that is an ACP client gets: the agent command reaching `relay`, which it
    /// may run (this binary, in its helper role) and connect through.
    pub(crate) fn of_acp(relay: &crate::acp::AcpRelay) -> Self {
        let command = relay.command().to_path_buf();
        let mut read_only = vec![command.clone()];
        if let Ok((helper, _)) = process::role_command() {
            read_only.extend(sandbox::program_paths(&helper));
        }
        Target {
            env: vec![(ACP_AGENT_COMMAND_ENV, command.into_os_string())],
            port: relay.port(),
            read_only,
            workspace: relay.workspace().to_path_buf(),
            root: relay.root().to_path_buf(),
        }
    }
}

/// The URL a product is handed: the agent's forwarder, so its traffic passes the scenario's
/// wire gates and faults and is logged.
fn agent_url(agent: &Agent) -> String {
    agent.forwarded_url()
}

/// What the scenario expects of a product at its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Expect {
    /// Exited with status 0.
    Success = 0,
    /// Exited unsuccessfully (a non-zero status, or a signal of its own).
    Failure = 1,
    /// Still running.
    Running = 2,
}

impl Expect {
    fn from_u8(value: u8) -> Self {
        match value {
            1 => Expect::Failure,
            2 => Expect::Running,
            _ => Expect::Success,
        }
    }
}

/// How a product ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProductExit {
    status: ExitStatus,
    stopped: bool,
}

impl ProductExit {
    /// Whether it exited with status 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// Its exit code, when it exited rather than being killed by a signal.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// The signal that ended it, if one did.
    pub fn signal(&self) -> Option<i32> {
        std::os::unix::process::ExitStatusExt::signal(&self.status)
    }

    /// The exit status itself.
    pub fn status(&self) -> ExitStatus {
        self.status
    }

    /// Whether a stop ended it ([`Product::stop`], or the scenario's end) rather than the
    /// product itself.
    pub fn stopped(&self) -> bool {
        self.stopped
    }
}

impl fmt::Display for ProductExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.status)?;
        if self.stopped {
            f.write_str(" (stopped)")?;
        }
        Ok(())
    }
}

/// A product process the scenario started with
/// [`Live::start_product`](crate::Live::start_product). Cheap to clone: every clone is the same
/// process.
///
/// Its output is captured whole (within 4 MiB in memory; the log files `product-<n>/stdout.log`
/// and `stderr.log` in its agent's root have everything) and every accessor redacts it. The
/// scenario's end stops it (SIGTERM to its process group, SIGKILL after a grace, reap, then every
/// process carrying its owner mark) and fails the scenario when it did not end as expected:
/// by default, it must have exited with status 0 by then.
#[derive(Clone)]
pub struct Product {
    inner: Arc<Inner>,
}

struct Inner {
    label: String,
    /// The program and arguments, redacted.
    command_line: String,
    redactor: Arc<Redactor>,
    pid: u32,
    /// `None` once stopped (its group killed, reaped and swept).
    child: Mutex<Option<OwnedChild>>,
    exit: watch::Receiver<Option<ExitStatus>>,
    /// How the stop that settled it ended (the first one; later stops return it).
    stopped: Mutex<Option<ProductExit>>,
    /// Serializes stops.
    op: tokio::sync::Mutex<()>,
    capture: Arc<Capture>,
    drained: Drained,
    expect: AtomicU8,
    /// [`Product::stop`] was called: the scenario decided how it ends.
    stopped_by_scenario: AtomicBool,
    /// The task that notes its exit on the report's timeline.
    noting_exit: Mutex<Option<JoinHandle<()>>>,
}

impl fmt::Debug for Product {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Product")
            .field("label", &self.inner.label)
            .field("pid", &self.inner.pid)
            .field("running", &self.is_running())
            .finish_non_exhaustive()
    }
}

impl Product {
    /// Starts `command` as the scenario's product number `index` for `target`; confined by
    /// the sandbox when `confined`. Its diagnostics pass through `redactor`.
    pub(crate) fn start(
        index: usize,
        command: ProductCommand,
        target: &Target,
        confined: bool,
        redactor: Arc<Redactor>,
    ) -> Result<Product, ProductError> {
        let label = format!("product {index} ({})", command.display_name());
        for (name, value) in &command.env {
            if let Some(value) = value {
                redactor.add_env(name, value);
            }
        }
        let command_line = redactor.redact(&command.line());
        let spawn_error = |message: String| ProductError::Spawn {
            product: label.clone(),
            command: command_line.clone(),
            message: redactor.redact(&message),
        };
        let io_error = |what: &'static str| {
            let product = label.clone();
            move |source| ProductError::Io {
                product,
                what,
                source,
            }
        };

        let dir = target.root.join(format!("product-{index}"));
        let (home, tmp) = (dir.join("home"), dir.join("tmp"));
        for made in [&home, &tmp] {
            std::fs::create_dir_all(made).map_err(io_error("create the directories"))?;
        }
        let open = |name: &str| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(name))
                .map_err(io_error("open the log files"))
        };
        let (stdout_file, stderr_file) = (open("stdout.log")?, open("stderr.log")?);

        let program = absolute_program(&command.program);
        let cwd = command
            .current_dir
            .clone()
            .unwrap_or_else(|| target.workspace.clone());
        // The launcher would only say so on the product's stderr, after a start that seemed fine.
        let own_path = command.env.iter().any(|(name, _)| name == "PATH");
        if confined && !own_path && sandbox::program_paths(&program).is_empty() {
            return Err(spawn_error(
                "no such program: give its path, or a name on PATH".to_owned(),
            ));
        }
        let given = [
            ("HOME", home.into_os_string()),
            ("TMPDIR", tmp.into_os_string()),
            (
                AGENT_DIRECTORY_ENV,
                target.workspace.clone().into_os_string(),
            ),
        ]
        .into_iter()
        .chain(target.env.iter().cloned())
        .map(|(name, value)| (name.into(), Some(value)));
        let env = given
            .into_iter()
            .chain(
                (command.env.iter())
                    .map(|(name, value)| (name.into(), value.as_ref().map(Into::into))),
            )
            .collect();
        let start = sandbox::Start {
            confined: confined.then(|| {
                let mut policy = policy::product(&command, &cwd, &target.root, target.port);
                for path in &target.read_only {
                    policy.allow_read(path);
                }
                policy
            }),
            program,
            args: command.args.clone(),
            current_dir: cwd,
            env,
            token: process::new_token(),
        };
        let spawned = start.spawn().map_err(|e| match e {
            SpawnError::Reaper(e) => ProductError::Reaper {
                product: label.clone(),
                message: redactor.redact(&e.to_string()),
            },
            e => spawn_error(e.to_string()),
        })?;
        let child = spawned.child;
        let pid = child.pid();
        timeline::note_keyed(Lane::Product, "started", &label, || {
            format!(
                "{command_line} (pid {pid}{})",
                if confined { ", sandboxed" } else { "" }
            )
        });
        let capture = Arc::new(Capture::default());
        let sinks = Sinks {
            stdout_file,
            stderr_file,
            label: label.clone(),
        };
        // A failure here drops `child`, which kills its group, reaps and sweeps.
        let drained = capture::pump(spawned.stdout, spawned.stderr, sinks, &capture)
            .map_err(io_error("start the output threads"))?;
        let exit = child.exit_watch();
        let noting_exit = note_exit(&label, exit.clone());
        Ok(Product {
            inner: Arc::new(Inner {
                label,
                command_line,
                redactor,
                pid,
                child: Mutex::new(Some(child)),
                exit,
                stopped: Mutex::default(),
                op: tokio::sync::Mutex::new(()),
                capture,
                drained,
                expect: AtomicU8::new(Expect::Success as u8),
                stopped_by_scenario: AtomicBool::new(false),
                noting_exit: Mutex::new(noting_exit),
            }),
        })
    }

    /// The owner mark of a product that runs (tests look for its carriers). Read from the
    /// harness's side: the process's own environment reads empty while it execs.
    #[cfg(test)]
    pub(crate) fn inner_token_for_test(&self) -> String {
        let child = self.inner.child.lock().unwrap();
        child.as_ref().expect("it runs").token().to_owned()
    }

    /// `product <n> (<name>)`, as messages and the report call it.
    pub fn label(&self) -> &str {
        &self.inner.label
    }

    /// Its pid (also its process group's id) while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.is_running().then_some(self.inner.pid)
    }

    /// Whether it still runs: not exited, not stopped.
    pub fn is_running(&self) -> bool {
        self.exit_status().is_none() && self.holds_child()
    }

    fn exit_status(&self) -> Option<ExitStatus> {
        *self.inner.exit.borrow()
    }

    fn holds_child(&self) -> bool {
        lock(&self.inner.child).is_some()
    }

    /// Waits up to `ceiling` (scaled by `LIVE_TIMEOUT_SCALE`) for it to exit, then for its
    /// output to be read to the end. A product still running at the ceiling is left running;
    /// the error carries its output's tail. After a stop, returns how the stop ended it.
    pub async fn wait_within(&self, ceiling: Duration) -> Result<ProductExit, ProductError> {
        if let Some(exit) = self.stop_exit() {
            return Ok(exit);
        }
        let ceiling = crate::settings::scaled(ceiling);
        let mut exit = self.inner.exit.clone();
        let status = match tokio::time::timeout(ceiling, exit.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => *status,
            _ => None,
        };
        let Some(status) = status else {
            return Err(ProductError::StillRunning {
                product: self.inner.label.clone(),
                waited: ceiling,
                tail: self.tail(FAILURE_TAIL),
            });
        };
        self.inner.drained.wait(DRAIN_CEILING).await;
        Ok(self.stop_exit().unwrap_or(ProductExit {
            status,
            stopped: false,
        }))
    }

    /// Waits up to `ceiling` (scaled) until a line of its output (stdout or stderr) contains
    /// `text`, and returns that line, redacted: how a scenario waits until the product reached a
    /// point it prints. Lines printed before the call count too. The error says whether it
    /// exited first, with its output's tail.
    pub async fn wait_for_output(
        &self,
        text: &str,
        ceiling: Duration,
    ) -> Result<String, ProductError> {
        let ceiling = crate::settings::scaled(ceiling);
        let deadline = tokio::time::Instant::now() + ceiling;
        let capture = &self.inner.capture;
        let mut seen = capture.watch();
        let mut from = 0;
        loop {
            // Read before the search: once drained, the search sees every line there will be.
            let drained = self.inner.drained.is_done();
            let upto = *seen.borrow_and_update();
            if let Some(line) = capture.find(from, text) {
                return Ok(self.inner.redactor.redact(&line));
            }
            from = upto;
            if drained || tokio::time::Instant::now() >= deadline {
                let ended = if drained {
                    Some(match self.exit_soon().await {
                        Some(status) => format!("it exited ({status})"),
                        None => "it closed its output".to_owned(),
                    })
                } else {
                    None
                };
                return Err(ProductError::OutputNotSeen {
                    product: self.inner.label.clone(),
                    needle: self.inner.redactor.redact(text),
                    waited: ceiling,
                    ended,
                    tail: self.tail(FAILURE_TAIL),
                });
            }
            tokio::select! {
                _ = seen.changed() => {}
                _ = self.inner.drained.wait(ceiling) => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        }
    }

    /// Its exit status, waiting a moment for it: the pipes reach their end just before the
    /// exit is seen.
    async fn exit_soon(&self) -> Option<ExitStatus> {
        let mut exit = self.inner.exit.clone();
        let waited = tokio::time::timeout(DRAIN_CEILING, exit.wait_for(Option::is_some)).await;
        match waited {
            Ok(Ok(status)) => *status,
            _ => self.exit_status(),
        }
    }

    /// Everything it printed so far, stdout and stderr interleaved in arrival order, redacted.
    pub fn output(&self) -> String {
        self.inner.redactor.redact(&self.inner.capture.text(None))
    }

    /// What it printed on stdout so far, redacted.
    pub fn stdout(&self) -> String {
        self.inner
            .redactor
            .redact(&self.inner.capture.text(Some(Stream::Stdout)))
    }

    /// What it printed on stderr so far, redacted.
    pub fn stderr(&self) -> String {
        self.inner
            .redactor
            .redact(&self.inner.capture.text(Some(Stream::Stderr)))
    }

    /// The last `n` lines of its output (both streams), redacted.
    pub fn tail(&self, n: usize) -> String {
        self.inner.redactor.redact(&self.inner.capture.tail(n))
    }

    /// Says the scenario expects it to fail: at the scenario's end it must have exited
    /// unsuccessfully (a non-zero status, or a signal it did not get from a stop); exiting with
    /// status 0, or still running, then fails the scenario. Replaces an earlier expectation.
    pub fn expect_failure(&self) {
        self.set_expect(Expect::Failure);
    }

    /// Says the scenario expects it to run until its end (a server, a watcher): still running
    /// then is no failure, and it is stopped; having exited before then, in any way, fails the
    /// scenario. Replaces an earlier expectation.
    pub fn expect_running(&self) {
        self.set_expect(Expect::Running);
    }

    fn set_expect(&self, expect: Expect) {
        self.inner.expect.store(expect as u8, Ordering::SeqCst);
    }

    /// Stops it now: SIGTERM to its process group, up to 5 s (scaled) for it to exit, SIGKILL,
    /// reap, then every process that still carries its owner mark (detached descendants) is
    /// killed. How it ended is then the scenario's business: the scenario's end does not judge
    /// it. Stopping a product that exited on its own still sweeps its descendants, and returns
    /// its own exit.
    pub async fn stop(&self) -> Result<ProductExit, ProductError> {
        self.inner.stopped_by_scenario.store(true, Ordering::SeqCst);
        self.stop_inner().await
    }

    fn stop_exit(&self) -> Option<ProductExit> {
        *lock(&self.inner.stopped)
    }

    async fn stop_inner(&self) -> Result<ProductExit, ProductError> {
        let _op = self.inner.op.lock().await;
        if let Some(exit) = self.stop_exit() {
            return Ok(exit);
        }
        let child = lock(&self.inner.child).take();
        let Some(mut child) = child else {
            return Err(self.stop_error("it was killed already".into()));
        };
        let exited_before = child.exit_status().is_some();
        let grace = crate::settings::scaled(STOP_GRACE);
        let ceiling = crate::settings::scaled(STOP_CEILING);
        let report = child
            .stop(grace, ceiling)
            .await
            .map_err(|e| self.stop_error(e.to_string()));
        // A child that was not confirmed reaped is dropped here: its `Drop` kills again,
        // synchronously, and says so if that fails too.
        drop(child);
        let report = report?;
        self.inner.drained.wait(DRAIN_CEILING).await;
        let exit = ProductExit {
            status: report.status,
            stopped: !exited_before,
        };
        // `swept`: it had exited on its own; the stop only cleaned up after it.
        let kind = if exit.stopped { "stopped" } else { "swept" };
        timeline::note_keyed(Lane::Product, kind, &self.inner.label, || {
            format!("{exit}; swept {} stray process(es)", report.swept)
        });
        *lock(&self.inner.stopped) = Some(exit);
        Ok(exit)
    }

    fn stop_error(&self, message: String) -> ProductError {
        ProductError::Stop {
            product: self.inner.label.clone(),
            message: self.inner.redactor.redact(&message),
            tail: self.tail(FAILURE_TAIL),
        }
    }

    /// The scenario's end for this product: judged by how it is at this moment, then stopped
    /// (always: an exited product's descendants are swept). A failure message when it did not
    /// end as the scenario expected, or could not be stopped.
    pub(crate) async fn finish(&self) -> Option<String> {
        let running = self.is_running();
        let stop = self.stop_inner().await;
        // Its exit is on the report before the end returns (its lines are: the stop drained them).
        let noting_exit = lock(&self.inner.noting_exit).take();
        if let Some(task) = noting_exit {
            let _ = tokio::time::timeout(DRAIN_CEILING, task).await;
        }
        if self.inner.capture.lines_seen() > capture::NOTED_LINES {
            timeline::note(Lane::Product, "output tail", || {
                format!(
                    "{}: {} lines in all, the timeline shows the first {}; the last ones:\n{}",
                    self.inner.label,
                    self.inner.capture.lines_seen(),
                    capture::NOTED_LINES,
                    self.inner.capture.tail(FAILURE_TAIL)
                )
            });
        }
        let exit = match stop {
            Ok(exit) => exit,
            Err(e) => return Some(e.to_string()),
        };
        if self.inner.stopped_by_scenario.load(Ordering::SeqCst) {
            return None;
        }
        let expect = Expect::from_u8(self.inner.expect.load(Ordering::SeqCst));
        let label = &self.inner.label;
        let problem = match (expect, running) {
            (Expect::Running, true) => return None,
            (Expect::Running, false) => format!(
                "{label} was expected to run until the scenario's end (expect_running), but it \
                 exited before: {exit}"
            ),
            (_, true) => format!(
                "{label} was still running at the scenario's end, so it was stopped: wait for it \
                 (product.wait_within(..)), or call product.expect_running() if the scenario \
                 expects it to run"
            ),
            (Expect::Failure, false) if exit.success() => {
                format!("{label} was expected to fail (expect_failure), but it exited with {exit}")
            }
            (Expect::Success, false) if !exit.success() => format!(
                "{label} exited with {exit}; call product.expect_failure() if the scenario \
                 expects that"
            ),
            (Expect::Failure | Expect::Success, false) => return None,
        };
        Some(format!(
            "{problem}\ncommand: {}\nits output ended:\n{}",
            self.inner.command_line,
            self.tail(FAILURE_TAIL)
        ))
    }

    /// The synchronous fallback (no runtime needed): SIGKILL the group, reap, sweep.
    pub(crate) fn kill_blocking(&self) {
        let child = lock(&self.inner.child).take();
        drop(child); // OwnedChild's Drop kills the group, reaps and sweeps
    }
}

/// `mutex`'s guard, also after a panic elsewhere poisoned it (its data stays consistent: every
/// holder only reads or swaps a value).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// `program` made absolute when it is a relative path (so it names the same file whatever the
/// product's working directory); a bare name is left for the `PATH` lookup.
fn absolute_program(program: &std::ffi::OsStr) -> PathBuf {
    let path = Path::new(program);
    if path.is_absolute() || path.components().count() < 2 {
        return path.to_path_buf();
    }
    std::env::current_dir()
        .map(|cwd| cwd.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// Notes the product's exit on the report's timeline when it happens (from a task on the
/// current runtime, whose threads write to the scenario's timeline), when this thread collects
/// for a report.
fn note_exit(label: &str, mut exit: watch::Receiver<Option<ExitStatus>>) -> Option<JoinHandle<()>> {
    if !timeline::is_collecting() {
        return None;
    }
    let runtime = tokio::runtime::Handle::try_current().ok()?;
    let label = label.to_owned();
    let task = runtime.spawn(async move {
        if let Ok(status) = exit.wait_for(Option::is_some).await {
            let status = status.map(|s| s.to_string()).unwrap_or_default();
            timeline::note_keyed(Lane::Product, "exited", &label, || status);
        }
    });
    Some(task)
}

#[cfg(test)]
impl ProductExit {
    pub(crate) fn for_test(status: ExitStatus, stopped: bool) -> Self {
        ProductExit { status, stopped }
    }
}
