//! A test process's side of the run's pool (nextest): connect to the pool's owner, starting one
//! when there is none (or replacing one that died), and lease a server over the connection.
//! The lease ends with a release message, or with the connection when this process dies.

use std::io::{self, BufReader};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::terms::{LeaseGrant, LeaseRequest, SeatGrant, ServerFacts};
use super::warm::SeatConfig;
use super::wire::{self, FromOwner, OwnerFile, ToOwner};
use crate::opencode::ProvisionError;
use crate::opencode::root::AgentRoot;
use crate::process::{self, Identity};
use crate::settings::{self, Role};

/// How long a test process waits for the pool's owner to answer (its start included).
const CONNECT_CEILING: Duration = Duration::from_secs(30);
/// How long a release may take (the owner disposes the scenario's instance), before scaling.
const RELEASE_CEILING: Duration = Duration::from_secs(45);
/// How long the lessee waits for its grant (a new server's start included), before scaling.
const GRANT_CEILING: Duration = Duration::from_secs(180);
/// How often a process waiting for the owner tries again.
const RETRY: Duration = Duration::from_millis(25);

/// Makes sure the run's pool owner answers, connecting now for the lease to come: the
/// connection is kept in `ahead` (the pool's), made before the scenario's root so the owner is
/// up (or was started) before anything is created in its directory, which a dead owner's
/// reaper may be emptying.
pub(crate) fn connect_ahead(dir: &Path, ahead: &Mutex<Option<UnixStream>>) -> io::Result<()> {
    let mut connected = ahead.lock().unwrap_or_else(|p| p.into_inner());
    if connected.is_none() {
        *connected = Some(connect_or_start(dir)?);
    }
    Ok(())
}

/// Leases a server from the run's pool for the scenario whose root is `root`, over `ahead` (the
/// connection [`connect_ahead`] made) if any. An owner that dies before it grants the lease is
/// replaced, and the lease asked once more.
pub(crate) async fn lease(
    dir: PathBuf,
    request: LeaseRequest,
    scenario_root: Option<(PathBuf, PathBuf)>,
    seat: Option<SeatConfig>,
    ahead: Option<UnixStream>,
) -> Result<RemoteLease, ProvisionError> {
    let asked = tokio::task::spawn_blocking(move || {
        lease_blocking(&dir, request, scenario_root, seat, ahead)
    })
    .await
    .map_err(|e| io::Error::other(e.to_string()))
    .and_then(|leased| leased);
    asked.map_err(|e| ProvisionError::io("lease a shared server from the run's pool", e))
}

/// `scenario_root`: the scenario's root and workspace, made in the pool's directory; `None`
/// for a seat (the owner's).
fn lease_blocking(
    dir: &Path,
    request: LeaseRequest,
    scenario_root: Option<(PathBuf, PathBuf)>,
    seat: Option<SeatConfig>,
    ahead: Option<UnixStream>,
) -> io::Result<RemoteLease> {
    let root = scenario_root.as_ref().map(|(root, _)| root.clone());
    let hello = ToOwner::Lease {
        request,
        root: root.clone(),
        workspace: scenario_root.map(|(_, workspace)| workspace),
        seat: seat.map(Box::new),
    };
    let mut stream = match ahead {
        Some(stream) => stream,
        None => connect_or_start(dir)?,
    };
    let mut retried = false;
    loop {
        match ask(&stream, &hello) {
            Ok(Ok(grant)) => return Ok(RemoteLease::new(grant, stream)),
            Ok(Err(refused)) => return Err(io::Error::other(refused)),
            Err(lost) if !retried => {
                retried = true;
                eprintln!(
                    "live: the run's pool owner stopped answering ({lost}): a new one starts and \
                     the lease is asked once more"
                );
                stream = connect_or_start(dir)?;
                if root.as_ref().is_some_and(|root| !root.exists()) {
                    return Err(io::Error::other(
                        "the pool's owner died and its reaper emptied the pool's directory, the \
                         scenario's root with it: run the scenario again",
                    ));
                }
            }
            Err(lost) => {
                return Err(io::Error::other(format!(
                    "the run's pool owner stopped answering twice: {lost}; its log is `{}` in the \
                     pool's directory",
                    wire::OWNER_LOG
                )));
            }
        }
    }
}

/// Asks for the lease: the grant's facts, or the owner's refusal (`Ok(Err)`); `Err`: the owner
/// is gone.
fn ask(stream: &UnixStream, hello: &ToOwner) -> io::Result<Result<LeaseGrant, String>> {
    wire::send(&mut &*stream, hello)?;
    stream.set_read_timeout(Some(settings::scaled(GRANT_CEILING)))?;
    let answer = wire::receive(&mut BufReader::new(stream));
    stream.set_read_timeout(None)?;
    match answer? {
        Some(FromOwner::Granted { grant }) => Ok(Ok(grant)),
        Some(FromOwner::Refused { error }) => Ok(Err(error)),
        Some(FromOwner::Released { .. }) => Err(io::Error::other("the owner answered out of turn")),
        None => Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the owner closed the connection",
        )),
    }
}

/// Connects to the pool's owner; starts one when nobody holds the pool's lock (no owner, or a
/// dead one: its servers are swept first).
fn connect_or_start(dir: &Path) -> io::Result<UnixStream> {
    let ceiling = settings::scaled(CONNECT_CEILING);
    let deadline = Instant::now() + ceiling;
    let mut started = 0;
    loop {
        if let Ok(stream) = UnixStream::connect(dir.join(wire::SOCKET)) {
            return Ok(stream);
        }
        if let Some(lock) = process::try_lock_run_dir(dir)? {
            if started == 2 {
                return Err(io::Error::other(format!(
                    "the run's pool owner exited at its start twice; its log is `{}` in the \
                     pool's directory",
                    wire::OWNER_LOG
                )));
            }
            replace_dead_owner(dir);
            start_owner(dir, lock)?;
            started += 1;
        }
        if Instant::now() >= deadline {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "the run's pool owner did not answer within {ceiling:?}; its log is `{}` in \
                     the pool's directory",
                    wire::OWNER_LOG
                ),
            ));
        }
        // The owner is another process starting: a bounded poll of its socket.
        std::thread::sleep(RETRY);
    }
}

/// A previous owner died (its lock is free, its owner file is there) and its reaper, if any,
/// has not cleaned up: its servers are swept, its files and the roots it made (its servers',
/// its seats': `live-<name>-<its pid>-<nonce>`) removed, but not a failure's evidence (`kept`)
/// nor a scenario's root.
fn replace_dead_owner(dir: &Path) {
    let Ok(text) = std::fs::read_to_string(dir.join(wire::OWNER_FILE)) else {
        return;
    };
    let mut tokens: Vec<String> = std::fs::read_to_string(dir.join(wire::TOKENS))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let owner = serde_json::from_str::<OwnerFile>(&text).ok();
    if let Some(owner) = &owner {
        tokens.push(owner.token.clone());
    }
    tokens.retain(|t| !t.is_empty());
    process::sweep(&tokens);
    let kept = std::fs::read_to_string(dir.join(process::RUN_DIR_KEPT)).unwrap_or_default();
    let made_by_owner = |name: &str| {
        let mut parts = name.rsplitn(3, '-');
        let (_nonce, pid) = (parts.next(), parts.next());
        owner
            .as_ref()
            .is_some_and(|o| pid == Some(o.pid.to_string().as_str()))
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let theirs = entry.file_name().to_str().is_some_and(made_by_owner);
        if theirs && !kept.lines().any(|k| Path::new(k) == path) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
    for file in [wire::OWNER_FILE, wire::TOKENS, wire::SOCKET] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    eprintln!("live: the run's pool owner had died: its servers were swept and a new owner starts");
}

/// Starts the pool's owner, handing it the lock (its stdin): it holds it while it lives.
fn start_owner(dir: &Path, lock: std::fs::File) -> io::Result<()> {
    let (program, args) = process::role_command()?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(wire::OWNER_LOG))?;
    // nextest's runner: the tests' parent, alive exactly as long as the run.
    let parent = nix::unistd::getppid().as_raw().unsigned_abs();
    let (pid, start) = process::identify(parent).unwrap_or((parent, 0));
    Command::new(program)
        .args(args)
        .env(settings::ROLE, Role::Pool.value())
        .env(process::OWNER_ENV, process::new_token())
        .env(settings::POOL_RUNNER, format!("{pid}:{start}"))
        .stdin(Stdio::from(lock))
        .stdout(Stdio::null())
        // Not the test's output: nextest waits for a test's pipes to close.
        .stderr(Stdio::from(log))
        .spawn()?;
    Ok(())
}

/// A lease of a server of the run's pool, held by this process's connection to the owner.
pub(crate) struct RemoteLease {
    facts: ServerFacts,
    /// The warm workspace leased with the server (the owner's).
    seat: Option<SeatGrant>,
    /// The seat went back to the pool at release: its root is not the scenario's to remove.
    seat_kept: AtomicBool,
    /// The server's identity at the grant: it runs while this process does.
    server: Option<Identity>,
    connection: Mutex<Option<UnixStream>>,
    released: AtomicBool,
}

impl std::fmt::Debug for RemoteLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteLease")
            .field("port", &self.facts.port)
            .finish_non_exhaustive()
    }
}

impl RemoteLease {
    fn new(grant: LeaseGrant, connection: UnixStream) -> Self {
        let facts = grant.server;
        let server = facts.pid.and_then(process::identify);
        Self {
            facts,
            seat: grant.seat,
            seat_kept: AtomicBool::new(false),
            server,
            connection: Mutex::new(Some(connection)),
            released: AtomicBool::new(false),
        }
    }

    pub(crate) fn facts(&self) -> &ServerFacts {
        &self.facts
    }

    /// The leased seat: its root's layout, its relay's port, whether it is warm.
    pub(crate) fn seat(&self) -> Option<(AgentRoot, u16, bool)> {
        self.seat
            .as_ref()
            .map(|s| (AgentRoot::layout(s.root.clone()), s.model_port, s.warm))
    }

    pub(crate) fn seat_kept(&self) -> bool {
        self.seat_kept.load(Ordering::SeqCst)
    }

    pub(crate) fn port(&self) -> u16 {
        self.facts.port
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.is_running().then_some(self.facts.pid).flatten()
    }

    pub(crate) fn is_running(&self) -> bool {
        self.server.is_some_and(process::is_alive)
    }

    /// The last `n` lines of the server's log files, stdout's then stderr's, unredacted.
    pub(crate) fn unredacted_log_tail(&self, n: usize) -> String {
        let mut lines = Vec::new();
        for log in [&self.facts.stdout_log, &self.facts.stderr_log] {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            lines.extend(
                all[all.len().saturating_sub(n)..]
                    .iter()
                    .map(|l| l.to_string()),
            );
        }
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Ends the lease and waits for the owner to have disposed of it (see `Lease::release`).
    pub(crate) async fn release(&self, passed: bool, approved_always: bool) {
        if self.released.swap(true, Ordering::SeqCst) {
            return;
        }
        let Some(stream) = self
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        else {
            return;
        };
        let released = tokio::task::spawn_blocking(move || -> io::Result<Option<FromOwner>> {
            let release = ToOwner::Release {
                passed,
                approved_always,
            };
            wire::send(&mut &stream, &release)?;
            stream.set_read_timeout(Some(settings::scaled(RELEASE_CEILING)))?;
            wire::receive::<FromOwner>(&mut BufReader::new(&stream))
        })
        .await;
        if let Ok(Ok(Some(FromOwner::Released {
            seat_kept,
            server_kept,
        }))) = released
        {
            self.seat_kept.store(seat_kept, Ordering::SeqCst);
            if let Some(root) = server_kept {
                eprintln!("kept shared server root: {}", root.display());
            }
        }
    }

    /// The synchronous fallback: the owner retires the server and keeps its root.
    pub(crate) fn abandon(&self) {
        if self.released.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(stream) = self
            .connection
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = wire::send(&mut &stream, &ToOwner::Abandon);
        }
    }
}
