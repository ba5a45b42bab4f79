//! The raw side: a bare `opencode serve --hostname 127.0.0.1 --port 0`, its port read from its
//! listening line, and a `GET /global/health` poll loop. Nothing of the harness runs in between;
//! the owner mark and the reaper registration (set up before the clock starts) only make sure
//! the bench leaves no process behind.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use harness_runtime::testing;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::common::{Bench, BenchError};

/// How often the raw loop asks for health (what a hand-written loop would do).
const POLL: Duration = Duration::from_millis(100);
/// One health request's own ceiling.
const REQUEST: Duration = Duration::from_secs(5);
/// SIGTERM to SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A bare server and its root; stopped (group killed, marked strays swept, root removed) by
/// [`RawServer::stop`] or, as a fallback, on drop.
pub struct RawServer {
    child: Option<tokio::process::Child>,
    token: String,
    root: PathBuf,
    pub base: String,
}

/// The port in `opencode server listening on http://127.0.0.1:P`.
fn listening_port(line: &str) -> Option<u16> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let authority = rest.split(['/', ' ']).next()?;
    authority.rsplit_once(':')?.1.trim_end().parse().ok()
}

impl RawServer {
    /// Creates a root like provisioning's, spawns the server there with the same hermetic
    /// environment, and returns once health answers 200, with the time that took (root
    /// included, as on the harness side).
    pub async fn start(
        bench: &Bench,
        program: &Path,
        config: &serde_json::Value,
    ) -> Result<(RawServer, Duration), BenchError> {
        let token = testing::new_token();
        testing::register_with_reaper(&token).map_err(|e| BenchError::io("start the reaper", e))?;
        let started = Instant::now();
        let bare = testing::bare_root("bench::raw", config)
            .map_err(|e| BenchError::io("create the raw root", e))?;
        bench.redactor.add_path(&bare.root, "[root]");
        let mut server = RawServer {
            child: None,
            token,
            root: bare.root.clone(),
            base: String::new(),
        };
        let stderr = std::fs::File::create(bare.root.join("stderr.log"))
            .map_err(|e| BenchError::io("create the raw server's log", e))?;
        let mut command = tokio::process::Command::new(program);
        command
            .args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
            .current_dir(&bare.workspace)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        // The same inherited variables are left out as provisioning leaves out.
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(|n| {
                n.starts_with("OPENCODE_")
                    || n == harness_runtime::testing::ROLE_ENV
                    || n == testing::OWNER_ENV
            }) {
                command.env_remove(name);
            }
        }
        command
            .envs(bare.env.iter().map(|(k, v)| (k, v)))
            .env(testing::OWNER_ENV, &server.token);
        let mut child = command
            .spawn()
            .map_err(|e| BenchError::io("spawn the raw opencode serve", e))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        server.child = Some(child);

        let ceiling = harness_runtime::scaled(Duration::from_secs(60));
        let port = tokio::time::timeout(ceiling, server.ready(stdout, bench))
            .await
            .map_err(|_| {
                BenchError::Raw(format!(
                    "the raw opencode serve was not ready within {ceiling:?} (no listening line \
                     or no health 200); its stderr: {}",
                    server.stderr_tail(bench)
                ))
            })??;
        server.base = format!("http://127.0.0.1:{port}");
        Ok((server, started.elapsed()))
    }

    async fn ready(
        &mut self,
        stdout: tokio::process::ChildStdout,
        bench: &Bench,
    ) -> Result<u16, BenchError> {
        let mut lines = BufReader::new(stdout).lines();
        let port = loop {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    if let Some(port) = listening_port(&line) {
                        break port;
                    }
                }
                _ => {
                    let status = match self.child.as_mut().map(|c| c.try_wait()) {
                        Some(Ok(Some(status))) => status.to_string(),
                        _ => "still running".into(),
                    };
                    return Err(BenchError::Raw(format!(
                        "the raw opencode serve closed stdout before its listening line \
                         ({status}); its stderr: {}",
                        self.stderr_tail(bench)
                    )));
                }
            }
        };
        bench.redactor.add_port(port);
        // Keep draining stdout so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let url = format!("http://127.0.0.1:{port}/global/health");
        loop {
            let answer = bench.http.get(&url).timeout(REQUEST).send().await;
            if matches!(&answer, Ok(r) if r.status() == reqwest::StatusCode::OK) {
                return Ok(port);
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The server's pid while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    fn stderr_tail(&self, bench: &Bench) -> String {
        let text = std::fs::read_to_string(self.root.join("stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join(" | ");
        bench.redactor.redact(&tail)
    }

    /// SIGTERM to the group, SIGKILL after the grace, reap, sweep marked strays, remove the root.
    pub async fn stop(mut self) -> Result<(), BenchError> {
        let mut exited = true;
        if let Some(mut child) = self.child.take() {
            exited = stop_group(&mut child).await;
        }
        // Tool commands leave the group; the mark finds them (and a server not reaped yet).
        testing::sweep(&self.token);
        if !exited {
            return Err(BenchError::Raw(
                "the raw opencode serve was not reaped after SIGKILL; its root is kept".into(),
            ));
        }
        std::fs::remove_dir_all(&self.root).map_err(|e| BenchError::io("remove the raw root", e))
    }
}

/// SIGTERM to `child`'s process group, SIGKILL after [`STOP_GRACE`]; whether it was reaped.
pub async fn stop_group(child: &mut tokio::process::Child) -> bool {
    if let Some(pid) = child.id() {
        signal_group(pid, libc::SIGTERM);
        if tokio::time::timeout(STOP_GRACE, child.wait())
            .await
            .is_err()
        {
            signal_group(pid, libc::SIGKILL);
        }
    }
    matches!(
        tokio::time::timeout(STOP_GRACE, child.wait()).await,
        Ok(Ok(_))
    )
}

fn signal_group(pid: u32, signal: libc::c_int) {
    // SAFETY: killpg only sends a signal; the group is the child's own (process_group(0)).
    unsafe {
        libc::killpg(pid as libc::pid_t, signal);
    }
}

impl Drop for RawServer {
    /// The fallback when `stop` did not run (an error or a panic): kill, sweep, remove.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            if let Some(pid) = child.id() {
                signal_group(pid, libc::SIGKILL);
            }
            let _ = child.start_kill();
            let _ = child.try_wait();
            testing::sweep(&self.token);
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }
}
