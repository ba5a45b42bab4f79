//! The owner of a nextest run's pool of shared servers: the test binary re-executed in the
//! `pool` role by the first test process of the run that needs a shared server. It runs this
//! process's pool (`servers`) for every test process of the run, each lease one connection
//! on the pool's socket, and ends when the run is over.
//!
//! - It holds the pool directory's lock for its whole life (the lock's descriptor is its stdin):
//!   a test process that can take the lock knows the owner is gone and starts another.
//! - Its own session: nextest's Ctrl-C (SIGINT to each test's process group) does not reach it;
//!   it ends when no lease is held for [`IDLE`] and nextest's runner (the tests' parent, pid
//!   and start time) is gone.
//! - Its servers carry owner marks registered with a reaper of its own, handed the pool's
//!   directory too: if the owner dies, even by SIGKILL, the reaper sweeps the servers and
//!   removes every root but a failure's evidence.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::run;
use super::servers::SharedPool;
use super::terms::{LeaseGrant, SeatGrant, ServerFacts};
use super::wire::{self, FromOwner, OwnerFile, ToOwner};
use crate::process::{self, Identity};

/// How long the owner stays with no lease once the runner is gone.
const IDLE: Duration = Duration::from_secs(3);
/// How often it checks.
const TICK: Duration = Duration::from_millis(250);

/// The owner's `main`, reached through `HARNESS_RUNTIME_ROLE=pool`.
pub(crate) fn run_pool_owner() -> ExitCode {
    // Out of the test's session and process group: signals to the test do not reach it.
    let _ = nix::unistd::setsid();
    let Some(dir) = run::run_dir() else {
        eprintln!("error: the pool's owner needs the run's NEXTEST_RUN_ID (a UUID)");
        return ExitCode::from(2);
    };
    let Some(runner) = runner() else {
        eprintln!(
            "error: the pool's owner needs {} = <pid>:<start time>",
            crate::settings::POOL_RUNNER
        );
        return ExitCode::from(2);
    };
    // The pool every lease of the run is served from, this process's to shut down.
    let pool = Rc::new(SharedPool::default());
    let served = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("could not start its runtime: {e}"))
        .and_then(|runtime| {
            tokio::task::LocalSet::new().block_on(&runtime, async {
                let served = serve(&dir, runner, &pool).await;
                pool.shutdown().await;
                served
            })
        });
    if let Err(why) = &served {
        eprintln!("error: the pool's owner stopped: {why}");
    }
    tidy(&dir);
    if served.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The runner the owner outlives by no more than [`IDLE`].
fn runner() -> Option<Identity> {
    let text = crate::settings::pool_runner()?;
    let (pid, start) = text.split_once(':')?;
    Some((pid.parse().ok()?, start.parse().ok()?))
}

/// Serves leases from `pool` until the run is over.
async fn serve(dir: &Path, runner: Identity, pool: &Rc<SharedPool>) -> Result<(), String> {
    let socket = dir.join(wire::SOCKET);
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket)
        .map_err(|e| format!("could not listen on {}: {e}", socket.display()))?;
    // The reaper (started here) cleans the directory if this process dies.
    process::register_token(&format!("{}{}", process::CLEAN_DIR, dir.display()))
        .map_err(|e| format!("could not start its reaper: {e}"))?;
    let me = OwnerFile {
        pid: std::process::id(),
        token: crate::settings::owner_mark(),
    };
    let written = serde_json::to_vec(&me)
        .map_err(std::io::Error::other)
        .and_then(|json| std::fs::write(dir.join(wire::OWNER_FILE), json));
    written.map_err(|e| format!("could not write its owner file: {e}"))?;
    let leases = Rc::new(Cell::new(0usize));
    let last = Rc::new(Cell::new(Instant::now()));
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                leases.set(leases.get() + 1);
                let (leases, last, dir) = (leases.clone(), last.clone(), dir.to_path_buf());
                let pool = pool.clone();
                tokio::task::spawn_local(async move {
                    serve_lease(stream, &dir, &pool).await;
                    leases.set(leases.get() - 1);
                    last.set(Instant::now());
                });
            }
            // The runner is another process, not ours to wait on: a poll of its liveness.
            () = tokio::time::sleep(TICK) => {
                if leases.get() == 0 && last.get().elapsed() >= IDLE && !process::is_alive(runner) {
                    return Ok(());
                }
            }
        }
    }
}

/// One connection: a lease from `pool`, from the grant to its release, or to the lessee's death.
async fn serve_lease(stream: UnixStream, dir: &Path, pool: &SharedPool) {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let Some(ToOwner::Lease {
        request,
        root,
        workspace,
        seat,
    }) = receive(&mut read).await
    else {
        return;
    };
    let leased = pool
        .lease(&request.program, &request.scenario, seat.as_deref())
        .await;
    let lease = match leased {
        Ok(lease) => lease,
        Err(e) => {
            let _ = send(
                &mut write,
                &FromOwner::Refused {
                    error: e.to_string(),
                },
            )
            .await;
            return;
        }
    };
    let server = lease.server().process();
    let facts = ServerFacts {
        port: server.port(),
        pid: server.pid(),
        owner_token: server.owner_token().to_string(),
        root: server.root().root.clone(),
        home: server.root().home.clone(),
        stdout_log: server.root().stdout_log(),
        stderr_log: server.root().stderr_log(),
    };
    note_token(dir, &facts.owner_token);
    let server_root = facts.root.clone();
    let seat = lease.seat().map(|(root, relay, warm)| SeatGrant {
        root: root.root,
        warm,
        model_port: relay,
    });
    // The scenario's root: its own, or its seat's.
    let Some((root, workspace)) = seat
        .as_ref()
        .map(|s| (s.root.clone(), s.root.join("workspace")))
        .or(root.zip(workspace))
    else {
        return;
    };
    let grant = FromOwner::Granted {
        grant: LeaseGrant {
            server: facts,
            seat,
        },
    };
    let granted = send(&mut write, &grant).await.is_ok();
    match (granted, receive(&mut read).await) {
        (
            true,
            Some(ToOwner::Release {
                passed,
                approved_always,
            }),
        ) => {
            lease.release(passed, &workspace, approved_always).await;
            if !passed {
                keep(dir, &[&root, &server_root]);
            }
            let released = FromOwner::Released {
                seat_kept: lease.seat_kept(),
                server_kept: (!passed).then_some(server_root),
            };
            let _ = send(&mut write, &released).await;
        }
        (true, Some(ToOwner::Abandon)) => {
            lease.abandon();
            keep(dir, &[&root, &server_root]);
        }
        // The lessee died (or spoke nonsense): whatever it left running goes with the server.
        // Its root (or seat) is nobody's evidence (no failure of the run names it): removed.
        _ => {
            lease.discard().await;
            if !crate::settings::keep_roots() {
                let _ = std::fs::remove_dir_all(&root);
            }
        }
    }
}

/// Notes roots the reaper must spare if this process dies (a failure's evidence).
fn keep(dir: &Path, roots: &[&PathBuf]) {
    for root in roots {
        process::keep_in_run_dir(dir, root);
    }
}

/// Notes a server's owner mark, for a process that replaces this one after it died with its
/// reaper.
fn note_token(dir: &Path, token: &str) {
    use std::io::Write;
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(wire::TOKENS))
        .and_then(|mut file| writeln!(file, "{token}"));
}

async fn receive(from: &mut BufReader<tokio::net::unix::OwnedReadHalf>) -> Option<ToOwner> {
    let mut line = String::new();
    match from.read_line(&mut line).await {
        Ok(n) if n > 0 => serde_json::from_str(&line).ok(),
        _ => None,
    }
}

async fn send(
    to: &mut tokio::net::unix::OwnedWriteHalf,
    message: &FromOwner,
) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    line.push(b'\n');
    to.write_all(&line).await
}

/// The run is over: the owner's own files go, and the directory with them when nothing else is
/// left in it (a kept root stays, with the owner's log that names it). The reaper is told the
/// directory is no longer its to clean.
fn tidy(dir: &Path) {
    for file in [wire::SOCKET, wire::OWNER_FILE, wire::TOKENS] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    process::forget_token(&format!("{}{}", process::CLEAN_DIR, dir.display()));
    let others = std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| {
                let name = e.file_name();
                ![
                    process::RUN_DIR_LOCK,
                    process::RUN_DIR_KEPT,
                    wire::OWNER_LOG,
                ]
                .iter()
                .any(|own| name == *own)
            })
            .count()
    });
    if others == 0 {
        for file in [
            wire::OWNER_LOG,
            process::RUN_DIR_KEPT,
            process::RUN_DIR_LOCK,
        ] {
            let _ = std::fs::remove_file(dir.join(file));
        }
        let _ = std::fs::remove_dir(dir);
    }
}
