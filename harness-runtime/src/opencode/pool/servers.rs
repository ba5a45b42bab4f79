//! Shared servers (`LIVE_ISOLATION=shared`): a pool of `opencode serve` processes that scenarios
//! lease, up to [`LESSEES_PER_SERVER`] at once. A scenario talks to its lease through
//! `?directory=<its workspace>`, so its sessions, files and project config (its own scripted
//! model, its permission policy) are its own; what it saves is the server's start. The pool is a
//! value its runner owns ([`SharedPool`]: the runner's for a run, the pool owner's for a nextest
//! run): its [`shutdown`](SharedPool::shutdown) stops every server at exit, and each server
//! carries an owner mark like any agent, so the sweep and the reaper cover them too.
//!
//! Every shared server and every leasing scenario's root lives in one directory of the pool's
//! (`live-shared-pool-<pid>-<nonce>`): a shared server's sandbox writes beneath it alone.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;

use super::warm::{self, Reset, Seat, SeatConfig};
use crate::opencode::options::DEFAULT_READY_CEILING;
use crate::opencode::root::{self, AgentRoot};
use crate::opencode::server_process::{Launch, ServerProcess};
use crate::opencode::{ModelsCatalog, ProvisionError, sandbox_plan};
use crate::redact::Redactor;

/// What every shared server is started with: nothing. `OPENCODE_CONFIG_CONTENT` outranks
/// every config file of a directory, so each setting of a scenario (its provider, model,
/// permission, snapshots, the product's settings) is in its workspace's
/// `.opencode/opencode.jsonc`, where a server of its own would have it; the environment keeps
/// autoupdate and sharing off.
const SERVER_CONFIG: &str = "{}";
/// The name the servers' roots carry (`live-shared-server-<pid>-<nonce>`).
const ROOT_NAME: &str = "shared-server";
/// The name of the pool's directory (`live-shared-pool-<pid>-<nonce>`).
const POOL_NAME: &str = "shared-pool";
/// The file in a shared server's root naming the scenarios that leased it, one a line in lease
/// order: a kept server root's logs are theirs, and the last one retired it. A warm workspace
/// kept as a failure's evidence names the failing scenario in one too (its name is the pool's).
const LEASED_BY: &str = "leased-by";
/// How long a released lease's instance may take to dispose, before scaling.
const DISPOSE_CEILING: Duration = Duration::from_secs(15);
/// Idle seats a server keeps: each booted instance costs the server memory (about 15 MB).
const IDLE_SEATS: usize = 4;
/// How long the runner waits for the servers to stop at exit, before scaling.
const SHUTDOWN_CEILING: Duration = Duration::from_secs(30);
/// How many scenarios lease one server at once, each in its own workspace. OpenCode runs its
/// JavaScript on one thread, and a server answers several scenarios at once about as fast as
/// one: each more server costs its start and a JIT warm-up of its own. Measured on 2 cores, the
/// 20 racy explorations of `examples/product`: on 6 threads, 6 servers took 108 CPU-s (59 s), 2
/// servers 46 (38 s), 1 server 42 (38 s); on 10 threads, 4 servers 71 CPU-s (39 s), 2 servers 53
/// (33 s), 1 server 44 (34 s).
pub(crate) const LESSEES_PER_SERVER: usize = 8;

/// Where a server's start is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Start {
    Starting,
    Ready,
    Failed,
}

/// One server of the pool.
pub(crate) struct SharedServer {
    process: ServerProcess,
    /// The scenarios leasing it right now (or claiming it while it still starts), at most
    /// [`LESSEES_PER_SERVER`].
    lessees: AtomicUsize,
    /// Never leased again: a scenario failed on it, its instance could not be disposed, or its
    /// start failed. Its last lessee stops it.
    retired: AtomicBool,
    /// Its root (logs, database) is a failure's evidence, kept at exit: a scenario failed on it
    /// or its start failed. A server retired only because a passing scenario's instance could
    /// not be disposed is removed like any other: nothing failed that its logs would explain.
    kept: AtomicBool,
    start: watch::Sender<Start>,
    /// Its idle seats (warm workspaces), the most recently released last.
    seats: Mutex<Vec<Seat>>,
}

/// The shared servers of one runner (the runner's for its run, the pool owner's for a nextest
/// run, a context's made by hand): leased by up to [`LESSEES_PER_SERVER`] scenarios at once,
/// stopped by
/// [`shutdown`](Self::shutdown) after the last lease. Dropped without it, it kills its servers.
#[derive(Default)]
pub(crate) struct SharedPool {
    servers: Mutex<Vec<Arc<SharedServer>>>,
    /// The pool's directory, created on first use; removed at shutdown once empty.
    dir: Mutex<Option<PathBuf>>,
    /// Ends (its sender dropped) when the thread starting warm servers is done: the shutdown
    /// waits for it, so no start is stopped half-way.
    warming: Mutex<Option<watch::Receiver<()>>>,
    /// Under nextest, a lessee's connection to the run's pool owner, made before the scenario's
    /// root (see `remote::connect_ahead`), for its lease to come.
    ahead: Mutex<Option<std::os::unix::net::UnixStream>>,
}

impl std::fmt::Debug for SharedPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedPool")
            .field("servers", &self.servers().len())
            .finish_non_exhaustive()
    }
}

impl SharedPool {
    fn servers(&self) -> std::sync::MutexGuard<'_, Vec<Arc<SharedServer>>> {
        self.servers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pool's directory: the shared servers' roots and the roots of the scenarios that
    /// lease them are created in it.
    pub(crate) fn dir(&self) -> std::io::Result<PathBuf> {
        // Under nextest, the run's pool: its owner answers before a lessee creates a root in it.
        if let Some(run) = super::run::run_dir() {
            if super::run::leases_from_owner() {
                super::remote::connect_ahead(&run, &self.ahead)?;
            }
            std::fs::create_dir_all(&run)?;
            return Ok(run);
        }
        let mut dir = self.dir.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(dir) = &*dir {
            return Ok(dir.clone());
        }
        let created = root::create_unique_dir(&std::env::temp_dir(), POOL_NAME)?;
        *dir = Some(created.clone());
        Ok(created)
    }

    /// The connection to the run's pool owner that [`dir`](Self::dir) made, for a lease.
    pub(crate) fn take_ahead(&self) -> Option<std::os::unix::net::UnixStream> {
        self.ahead.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl SharedServer {
    pub(crate) fn process(&self) -> &ServerProcess {
        &self.process
    }

    fn root(&self) -> &Path {
        &self.process.root().root
    }

    /// Takes `places` lessees' places on the server, if they are free.
    fn claim(&self, places: usize) -> bool {
        self.lessees
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n + places <= LESSEES_PER_SERVER).then_some(n + places)
            })
            .is_ok()
    }

    /// A lessee is done with its `places` on the server: a retired server is stopped by its last
    /// lessee (its other lessees run on until they end; a failed stop leaves it to the runner's
    /// shutdown).
    async fn let_go(&self, places: usize) {
        let before = self.lessees.fetch_sub(places, Ordering::SeqCst);
        if before == places && self.retired.load(Ordering::SeqCst) {
            let _ = self.process.stop().await;
        }
    }

    /// The server's home directory (its `HOME`), for the scenario's redactor.
    pub(crate) fn home(&self) -> &Path {
        &self.process.root().home
    }
}

/// A scenario's place on one shared server (and its exclusive use of a seat on it) until
/// [`Lease::release`].
pub(crate) struct Lease {
    server: Arc<SharedServer>,
    released: AtomicBool,
    seat: Mutex<Option<Seat>>,
    /// The seat's instance was booted by an earlier lessee.
    warm: bool,
    /// The seat went back to the server at release: its root is the pool's, not to be removed.
    seat_kept: AtomicBool,
    /// `<topic>::<fn>` of the lessee, for its progress lines.
    scenario: String,
    /// The lessees' places it takes on the server ([`places`]).
    places: usize,
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("port", &self.server.process.port())
            .finish_non_exhaustive()
    }
}

impl Lease {
    pub(crate) fn server(&self) -> &SharedServer {
        &self.server
    }

    /// The leased seat's root (its workspace is the scenario's) and its relay's port, and
    /// whether it is warm.
    pub(crate) fn seat(&self) -> Option<(AgentRoot, u16, bool)> {
        let seat = self.seat.lock().unwrap_or_else(|p| p.into_inner());
        seat.as_ref()
            .map(|s| (s.root.clone(), s.relay.port(), self.warm))
    }

    /// Whether the released seat went back to the pool (its root is the pool's to remove).
    pub(crate) fn seat_kept(&self) -> bool {
        self.seat_kept.load(Ordering::SeqCst)
    }

    /// Ends the lease. A scenario that passed hands the server back after its sessions were
    /// deleted and its directory's instance disposed (sessions stop, memory is freed); one that
    /// failed retires it, so whatever it left running cannot touch the next scenario, and its
    /// root is kept. A retired server is stopped once its other lessees are done with it.
    /// A seat's instance is not disposed when nothing only a dispose clears happened
    /// (`approved_always`: an ask may have been answered `always`): its sessions are deleted, its
    /// work tree scrubbed, and it waits for the next scenario with the same config.
    pub(crate) async fn release(&self, passed: bool, workspace: &Path, approved_always: bool) {
        if self.released.swap(true, Ordering::SeqCst) {
            return;
        }
        let seat = self.seat.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(seat) = seat {
            seat.relay.cut();
            if !passed {
                // Kept as the failure's evidence: its name is the pool's, this says whose.
                note_lessee(&seat.root.root, &self.scenario);
            }
            if passed && self.hand_on(seat, approved_always).await {
                self.seat_kept.store(true, Ordering::SeqCst);
                self.server.let_go(self.places).await;
                return;
            }
        }
        let disposed = passed && self.dispose(workspace).await;
        if !(disposed && self.server.process.is_running()) {
            self.server.retired.store(true, Ordering::SeqCst);
            if !passed {
                self.server.kept.store(true, Ordering::SeqCst);
            }
        }
        // A retired server is stopped by its last lessee rather than at exit: nothing it still
        // runs outlives its scenarios by long.
        self.server.let_go(self.places).await;
    }

    /// Resets a passed scenario's seat and gives it back to the server; `false` when it cannot
    /// be (the caller disposes the instance, and the seat's root goes with the scenario's).
    async fn hand_on(&self, seat: Seat, approved_always: bool) -> bool {
        // A server another lessee retired takes no seat back: it leases nothing any more.
        if !self.server.process.is_running() || self.server.retired.load(Ordering::SeqCst) {
            return false;
        }
        let client = self.client(&seat.root.workspace);
        let Some(deleted) = delete_sessions(&client).await else {
            return false;
        };
        // An ask the scenario left unanswered (a product that stopped rather than replied) is
        // rejected: it would make the instance be disposed and booted again for the next lessee.
        let held = warm::instance_state(&client, &deleted).await.held;
        let left = seat.boot_inputs_left();
        if self.warm && !left.is_empty() {
            // Its instance booted before they were written: OpenCode may not have read them.
            crate::progress::progress(
                &self.scenario,
                &format!(
                    "wrote {} into a warm workspace, whose OpenCode instance had read its config \
                     before: give settings to AgentOptions::product_config, or mark the \
                     scenario isolation = \"server\"",
                    left.join(", ")
                ),
            );
        }
        let reset = match seat.reset() {
            Reset::Warm if held.is_empty() && !approved_always => Reset::Warm,
            Reset::Warm => Reset::Disposed,
            other => other,
        };
        // Why a seat was not handed on warm, for whoever wonders where the time went.
        crate::timeline::note(crate::timeline::Lane::Provisioning, "seat released", || {
            format!("{reset:?} (instance holds {held:?}, always approval: {approved_always})")
        });
        match reset {
            Reset::Gone => return false,
            Reset::Disposed => {
                if client.dispose().await.is_err() {
                    return false;
                }
                reboot(client);
            }
            Reset::Warm => {}
        }
        let evicted = {
            let mut seats = self.server.seats.lock().unwrap_or_else(|p| p.into_inner());
            seats.push(seat);
            let over = seats.len().saturating_sub(IDLE_SEATS);
            seats.drain(..over).collect::<Vec<_>>()
        };
        for old in evicted {
            let client = self.client(&old.root.workspace);
            let _ = client.dispose().await;
            let _ = std::fs::remove_dir_all(&old.root.root);
        }
        true
    }

    fn client(&self, workspace: &Path) -> crate::client::Client {
        crate::client::Client::new(
            self.server.process.endpoint(),
            self.server.process.redactor().clone(),
        )
        .with_directory(workspace)
        .with_request_ceiling(crate::settings::scaled(DISPOSE_CEILING))
    }

    /// Deletes the scenario's sessions, then disposes its directory's instance. OpenCode looks
    /// a session up by id in the whole server's database, whatever the directory: deleted, a
    /// session the next scenario learns the id of answers 404, as on a server of its own.
    /// Anything that fails retires the server instead.
    async fn dispose(&self, workspace: &Path) -> bool {
        let client = self.client(workspace);
        delete_sessions(&client).await.is_some() && client.dispose().await.is_ok()
    }

    /// The synchronous fallback (a scenario's slot dropped without `finish`): retire the server
    /// (stopped by its last other lessee, else at the runner's shutdown). Its seat is dropped
    /// with the lease (its root is kept with the scenario's evidence).
    pub(crate) fn abandon(&self) {
        if !self.released.swap(true, Ordering::SeqCst) {
            if let Some(seat) = &*self.seat.lock().unwrap_or_else(|p| p.into_inner()) {
                note_lessee(&seat.root.root, &self.scenario);
            }
            self.server.retired.store(true, Ordering::SeqCst);
            self.server.kept.store(true, Ordering::SeqCst);
            self.server.lessees.fetch_sub(self.places, Ordering::SeqCst);
        }
    }
}

impl Lease {
    /// The lessee vanished (its process died, even by SIGKILL: the run's pool owner saw its
    /// connection close): the server is retired and stopped, with whatever the scenario left
    /// running on it, once its other lessees are done. Its root is no failure's evidence (none
    /// of the run's names it): removed.
    pub(crate) async fn discard(&self) {
        if !self.released.swap(true, Ordering::SeqCst) {
            self.server.retired.store(true, Ordering::SeqCst);
            self.server.let_go(self.places).await;
        }
    }
}

#[cfg(test)]
impl Lease {
    /// A lease of `process` outside the pool, for tests of the lease's holder.
    pub(crate) fn unpooled(process: ServerProcess) -> Self {
        Lease {
            server: Arc::new(SharedServer {
                process,
                lessees: AtomicUsize::new(1),
                retired: AtomicBool::new(false),
                kept: AtomicBool::new(false),
                start: watch::Sender::new(Start::Ready),
                seats: Mutex::default(),
            }),
            released: AtomicBool::new(false),
            seat: Mutex::default(),
            warm: false,
            seat_kept: AtomicBool::new(false),
            scenario: String::new(),
            places: 1,
        }
    }
}

/// Deletes every session of `client`'s directory. OpenCode looks a session up by id in the whole
/// server's database, whatever the directory: deleted, a session the next scenario learns the
/// id of answers 404, as on a server of its own. The ids deleted; `None` when one failed.
async fn delete_sessions(client: &crate::client::Client) -> Option<HashSet<String>> {
    let sessions = client.list_sessions().await.ok()?;
    let mut deleted = HashSet::new();
    for session in sessions {
        match client.delete_session(&session.id).await {
            Ok(_) => {}
            // A child session goes with its parent.
            Err(e) if e.is_not_found() => {}
            Err(_) => return None,
        }
        deleted.insert(session.id);
    }
    Some(deleted)
}

/// Boots a disposed seat's instance again in the background, so its next lessee finds it warm.
/// A failure only costs that lessee the boot.
fn reboot(client: crate::client::Client) {
    warm::runtime().spawn(async move {
        for path in ["/project/current", "/config", "/agent"] {
            let _ = client.get_value(path).await;
        }
    });
}

impl SharedPool {
    /// Leases a shared server of `program` with a lessee's place free to `scenario`: a ready one
    /// (the one with the fewest lessees), else one still warming up (waiting for its start), else
    /// a new one started for this scenario. With `seat`, a ready server holding an idle seat of
    /// the same config comes first, and the lease includes a seat: that warm one, else a new one.
    pub(crate) async fn lease(
        &self,
        program: &Path,
        scenario: &str,
        seat: Option<&SeatConfig>,
    ) -> Result<Lease, ProvisionError> {
        let places = places(seat);
        let has_seat = |server: &SharedServer| {
            seat.is_some_and(|wanted| {
                let seats = server.seats.lock().unwrap_or_else(|p| p.into_inner());
                seats.iter().any(|s| s.key == wanted.key)
            })
        };
        let claim = |wanted: Start, warm_only: bool| {
            let mut usable: Vec<_> = self
                .servers()
                .iter()
                .filter(|server| {
                    !server.retired.load(Ordering::SeqCst)
                        && *server.start.borrow() == wanted
                        && server.process.program() == program
                        && (wanted == Start::Starting || server.process.is_running())
                        && (!warm_only || has_seat(server))
                })
                .cloned()
                .collect();
            // The least busy first: the lessees' work spreads over the servers (and cores).
            usable.sort_by_key(|server| server.lessees.load(Ordering::SeqCst));
            usable.into_iter().find(|server| server.claim(places))
        };
        let mut server = claim(Start::Ready, true).or_else(|| claim(Start::Ready, false));
        if server.is_none() {
            if let Some(warming) = claim(Start::Starting, false) {
                let mut started = warming.start.subscribe();
                // The warm start has its own readiness ceiling; this wait ends with it.
                let ready = started.wait_for(|s| *s != Start::Starting).await;
                if matches!(ready.as_deref(), Ok(Start::Ready)) {
                    server = Some(warming.clone());
                }
            }
        }
        let server = match server {
            Some(server) => server,
            None => self.start(program, places).await?,
        };
        note_lessee(server.root(), scenario);
        let (seat, warm) = match seat {
            None => (None, false),
            Some(wanted) => match self.take_seat(&server, wanted) {
                Ok(taken) => taken,
                Err(e) => {
                    server.lessees.fetch_sub(places, Ordering::SeqCst);
                    return Err(e);
                }
            },
        };
        Ok(Lease {
            server,
            released: AtomicBool::new(false),
            seat: Mutex::new(seat),
            warm,
            seat_kept: AtomicBool::new(false),
            scenario: scenario.to_string(),
            places,
        })
    }

    /// The server's idle seat for `wanted`'s config (warm), else a new one; pointed at the
    /// scenario's model.
    fn take_seat(
        &self,
        server: &SharedServer,
        wanted: &SeatConfig,
    ) -> Result<(Option<Seat>, bool), ProvisionError> {
        let idle = {
            let mut seats = server.seats.lock().unwrap_or_else(|p| p.into_inner());
            seats
                .iter()
                .rposition(|s| s.key == wanted.key)
                .map(|at| seats.remove(at))
        };
        let (seat, warm) = match idle {
            Some(seat) => (seat, true),
            None => {
                let pool_dir = self
                    .dir()
                    .map_err(|e| ProvisionError::io("create the shared servers' directory", e))?;
                let seat =
                    Seat::create(&pool_dir, wanted, (server.root(), server.process.program()))
                        .map_err(|e| {
                            ProvisionError::io("create a workspace on a shared server", e)
                        })?;
                (seat, false)
            }
        };
        seat.relay.point_to(wanted.model_port);
        Ok((Some(seat), warm))
    }
}

/// The lessees' places a lease takes on its server: one in a seat, every one in a directory that
/// boots for it (`AgentOptions::fresh_workspace`, `LIVE_KEEP`), which leases its server alone as
/// a server of its own would be: a neighbour's instance booting beside it reorders what the boot
/// announces (seen in the conformance suite: `catalog.updated` after `reference.updated`).
fn places(seat: Option<&SeatConfig>) -> usize {
    if seat.is_some() {
        1
    } else {
        LESSEES_PER_SERVER
    }
}

/// Appends `scenario` to the server's [`LEASED_BY`]. Evidence only: a scenario does not fail
/// because it could not be written.
fn note_lessee(root: &Path, scenario: &str) {
    use std::io::Write;
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(root.join(LEASED_BY))
        // One write per line: lessees at once append to one file, and an append is atomic per
        // write, where `writeln!` may write the name and its newline apart.
        .and_then(|mut file| file.write_all(format!("{scenario}\n").as_bytes()));
}

impl SharedPool {
    /// Starts a new server, `places` of it leased already.
    async fn start(
        &self,
        program: &Path,
        places: usize,
    ) -> Result<Arc<SharedServer>, ProvisionError> {
        let server = self.prepare(program, places)?;
        finish_start(&server).await?;
        Ok(server)
    }

    /// A new server of the pool, not started yet: its root made and its entry in the pool, so a
    /// lease finds it while it starts.
    fn prepare(&self, program: &Path, places: usize) -> Result<Arc<SharedServer>, ProvisionError> {
        let sandbox = crate::sandbox::current().map_err(ProvisionError::Sandbox)?;
        let pool_dir = self
            .dir()
            .map_err(|e| ProvisionError::io("create the shared servers' directory", e))?;
        let root = AgentRoot::create_in(&pool_dir, ROOT_NAME)
            .map_err(|e| ProvisionError::io("create a shared server's root", e))?;
        let redactor = Arc::new(Redactor::for_scenario());
        root.register(&redactor, 1);
        // Its scenarios' configs are the harness's (`policy`): none can see the catalog.
        let env = root.hermetic_env(SERVER_CONFIG, ModelsCatalog::Empty);
        let mut process = ServerProcess::new(
            root,
            Launch {
                program: program.to_path_buf(),
                env,
            },
            DEFAULT_READY_CEILING,
            redactor,
            Arc::default(),
        );
        if sandbox.is_on() {
            process = process.confined(sandbox_plan::shared_server(&pool_dir, program));
        }
        let server = Arc::new(SharedServer {
            process,
            lessees: AtomicUsize::new(places),
            retired: AtomicBool::new(false),
            kept: AtomicBool::new(false),
            start: watch::Sender::new(Start::Starting),
            seats: Mutex::default(),
        });
        // In the pool before the start: the runner's shutdown covers a start it interrupted.
        self.servers().push(server.clone());
        Ok(server)
    }
}

async fn finish_start(server: &SharedServer) -> Result<(), ProvisionError> {
    match server.process.start().await {
        Ok(()) => {
            server.start.send_replace(Start::Ready);
            Ok(())
        }
        Err(e) => {
            server.retired.store(true, Ordering::SeqCst);
            server.kept.store(true, Ordering::SeqCst);
            server.start.send_replace(Start::Failed);
            Err(e)
        }
    }
}

impl SharedPool {
    /// Starts the servers of `program` that `at_once` scenarios leasing together need, in the
    /// background, so the first scenarios find them warm. The runner calls it once, before the
    /// first trial, when scenarios will share. The servers are in the pool (starting) when it
    /// returns: the first scenarios wait for them instead of starting more.
    pub(crate) fn prewarm(&self, program: PathBuf, at_once: usize) {
        let count = at_once.div_ceil(LESSEES_PER_SERVER);
        // The run's pool starts its servers in its owner, as its lessees ask.
        if super::run::leases_from_owner() {
            return;
        }
        // A failed preparation leaves the start to the scenarios, which report it.
        let servers: Vec<_> = (0..count)
            .map_while(|_| self.prepare(&program, 0).ok())
            .collect();
        if servers.is_empty() {
            return;
        }
        let (done, warming) = watch::channel(());
        let spawned = std::thread::Builder::new()
            .name("live-shared-warmup".into())
            .spawn(move || {
                // Dropped when the thread ends, however: the shutdown's signal.
                let _done = done;
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                let local = tokio::task::LocalSet::new();
                local.block_on(&runtime, async {
                    let mut starts = tokio::task::JoinSet::new();
                    for server in servers {
                        // A failed warm start is retired and kept: a scenario then starts its own
                        // and reports the failure, if it repeats.
                        starts.spawn_local(async move { finish_start(&server).await });
                    }
                    while starts.join_next().await.is_some() {}
                });
            });
        if spawned.is_ok() {
            *self.warming.lock().unwrap_or_else(|p| p.into_inner()) = Some(warming);
        }
    }

    /// Stops every server of the pool and removes its root, except a kept one's (a scenario failed
    /// on it, or its start failed) or under `LIVE_KEEP`: those are printed once. Called by its
    /// runner after the last lease; without shared servers it does nothing.
    pub(crate) async fn shutdown(&self) {
        // A warm start still running is let finish: stopping it half-way would race its spawn.
        let warming = self
            .warming
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(mut warming) = warming {
            // Each start has its own readiness ceiling: this wait ends with the last of them.
            let _ = warming.wait_for(|_| false).await;
        }
        let servers: Vec<_> = std::mem::take(&mut *self.servers());
        let pool_dir = self.dir.lock().unwrap_or_else(|p| p.into_inner()).take();
        let ceiling = crate::settings::scaled(SHUTDOWN_CEILING);
        let mut stopped = Vec::new();
        for server in &servers {
            let stop = tokio::time::timeout(ceiling, server.process.stop()).await;
            stopped.push(matches!(stop, Ok(Ok(()))));
        }
        clear_out(&servers, &stopped, pool_dir);
    }
}

impl Drop for SharedPool {
    /// The synchronous fallback of a pool its runner did not shut down (a context made by
    /// hand): every server killed, its root removed as the shutdown removes it.
    fn drop(&mut self) {
        let servers: Vec<_> = std::mem::take(&mut *self.servers());
        for server in &servers {
            server.process.kill_blocking();
        }
        let pool_dir = self.dir.lock().unwrap_or_else(|p| p.into_inner()).take();
        clear_out(&servers, &vec![true; servers.len()], pool_dir);
    }
}

/// After the servers' stop (`stopped`: which stopped in time), kills the others and removes
/// every root but a failure's evidence, then the pool's directory when nothing is left in it.
fn clear_out(servers: &[Arc<SharedServer>], stopped: &[bool], pool_dir: Option<PathBuf>) {
    for (server, &stopped) in servers.iter().zip(stopped) {
        if !stopped {
            server.process.kill_blocking();
        }
        // Idle seats held nothing of a failure: their roots go, whatever the server's fate.
        let seats = std::mem::take(&mut *server.seats.lock().unwrap_or_else(|p| p.into_inner()));
        for seat in seats {
            if std::fs::remove_dir_all(&seat.root.root).is_err() {
                eprintln!("kept shared workspace root: {}", seat.root.root.display());
            }
        }
        let keep = !stopped || server.kept.load(Ordering::SeqCst) || crate::settings::keep_roots();
        if keep || std::fs::remove_dir_all(server.root()).is_err() {
            eprintln!("kept shared server root: {}", server.root().display());
        }
    }
    remove_if_empty(pool_dir);
}

/// Removes the pool's directory when nothing was kept in it (a kept root stays where its
/// printed path says).
fn remove_if_empty(pool_dir: Option<PathBuf>) {
    if let Some(dir) = pool_dir {
        let _ = std::fs::remove_dir(dir);
    }
}
