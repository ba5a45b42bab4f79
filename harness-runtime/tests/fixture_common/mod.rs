//! Shared by the `fixture_*` tests: spawning the fixture agent bin, SSE collection, and a small
//! checker for the real server's schemas (copied from OpenCode 1.18.33's `GET /doc`).
#![allow(dead_code)] // each test file uses a different subset

pub mod schema;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

/// A ceiling scaled by `LIVE_TIMEOUT_SCALE`, as the harness scales its own.
pub fn ceiling(secs: f64) -> Duration {
    harness_runtime::scaled(Duration::from_secs_f64(secs))
}

/// A client's root, made as provisioning makes an agent's (layout and hermetic environment:
/// its own HOME, XDG directories, TMPDIR and database, no inherited `OPENCODE_*`), so a real
/// client of the fixture runs in an agent's conditions. Removed on drop.
pub struct ClientRoot(pub harness_runtime::testing::BareRoot);

impl ClientRoot {
    /// A root named after `name`.
    pub fn new(name: &str) -> Self {
        let bare = harness_runtime::testing::bare_root(name, &json!({}))
            .unwrap_or_else(|e| panic!("could not create the client's root: {e}"));
        ClientRoot(bare)
    }

    /// `program` in the root's workspace, with its hermetic environment.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        self.0.command(program)
    }

    /// `text` with the root's paths as `<root>`: they are volatile.
    pub fn redact(&self, text: &str) -> String {
        text.replace(&*self.0.root.to_string_lossy(), "<root>")
    }
}

impl Drop for ClientRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0.root);
    }
}

pub const BIN: &str = env!("CARGO_BIN_EXE_live-fixture-agent");

/// How a start ended.
#[derive(Debug)]
pub enum Start {
    /// The listening line arrived: the agent serves on this port.
    Listening(u16),
    /// Stdout closed without the line; the process exited with this status.
    Exited(ExitStatus),
    /// Neither within the ceiling.
    TimedOut,
}

/// One fixture agent process, killed and reaped on drop (no leaks, also on panic).
pub struct Agent {
    pid: nix::unistd::Pid,
    exit: mpsc::Receiver<ExitStatus>,
    exited: Option<ExitStatus>,
    pub home: PathBuf,
    pub base: String,
    lines: mpsc::Receiver<String>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    /// Says once that the stderr pipe reached its end (then disconnects).
    stderr_end: mpsc::Receiver<()>,
}

impl Agent {
    /// Spawns `live-fixture-agent serve --hostname 127.0.0.1 --port 0` with `HOME = home`.
    pub fn spawn(home: &Path, env: &[(&str, &str)]) -> (Agent, Start, Duration) {
        Self::spawn_within(home, env, ceiling(10.0))
    }

    /// [`Agent::spawn`] with a readiness ceiling.
    pub fn spawn_within(
        home: &Path,
        env: &[(&str, &str)],
        within: Duration,
    ) -> (Agent, Start, Duration) {
        let started = Instant::now();
        let mut command = Command::new(BIN);
        command
            .args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
            .env("HOME", home)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            command.env(k, v);
        }
        let mut child = command.spawn().expect("spawn the fixture agent bin");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let (end_tx, stderr_end) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
            let _ = end_tx.send(());
        });
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        // A thread owns the child and reaps it: exits are waited on, never polled.
        let (exit_tx, exit) = mpsc::channel();
        std::thread::spawn(move || {
            if let Ok(status) = child.wait() {
                let _ = exit_tx.send(status);
            }
        });
        let mut agent = Agent {
            pid,
            exit,
            exited: None,
            home: home.to_path_buf(),
            base: String::new(),
            lines,
            stderr,
            stderr_end,
        };
        let start = agent.wait_listening(within);
        if let Start::Listening(port) = start {
            agent.base = format!("http://127.0.0.1:{port}");
        }
        (agent, start, started.elapsed())
    }

    /// Spawns and expects readiness.
    pub fn ready(home: &Path) -> Agent {
        Self::ready_with(home, &[])
    }

    pub fn ready_with(home: &Path, env: &[(&str, &str)]) -> Agent {
        let (agent, start, _) = Self::spawn(home, env);
        match start {
            Start::Listening(_) => agent,
            other => panic!(
                "fixture agent did not start: {other:?}; stderr: {}",
                agent.stderr()
            ),
        }
    }

    fn wait_listening(&mut self, within: Duration) -> Start {
        let re =
            regex::Regex::new(r"^opencode server listening on http://127\.0\.0\.1:(\d+)$").unwrap();
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(c) = re.captures(&line) {
                        return Start::Listening(c[1].parse().unwrap());
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return Start::TimedOut,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return match self.wait_exit(deadline.saturating_duration_since(Instant::now()))
                    {
                        Some(status) => Start::Exited(status),
                        None => Start::TimedOut,
                    };
                }
            }
        }
    }

    /// Waits for the process to exit, within `within`.
    pub fn wait_exit(&mut self, within: Duration) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.exited = self.exit.recv_timeout(within).ok();
        }
        self.exited
    }

    /// What the agent wrote to stderr so far; once its exit was seen, all of it. The exit can be
    /// seen before the reader thread drained the pipe, so then this waits (5 s at most) for the
    /// pipe's end; a later call returns at once.
    pub fn stderr(&self) -> String {
        if self.exited.is_some() {
            let _ = self.stderr_end.recv_timeout(Duration::from_secs(5));
        }
        self.stderr.lock().unwrap().clone()
    }

    pub fn pid(&self) -> nix::unistd::Pid {
        self.pid
    }

    /// Signals the agent unless it is known to have exited.
    pub fn signal(&mut self, signal: nix::sys::signal::Signal) {
        if self.exited.is_none() {
            self.exited = self.exit.try_recv().ok();
        }
        if self.exited.is_none() {
            let _ = nix::sys::signal::kill(self.pid, signal);
        }
    }

    /// SIGTERM and reap (for restarts).
    pub fn stop(mut self) {
        self.signal(nix::sys::signal::Signal::SIGTERM);
        assert!(
            self.wait_exit(ceiling(5.0)).is_some(),
            "agent did not stop on SIGTERM"
        );
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.signal(nix::sys::signal::Signal::SIGKILL);
        if self.wait_exit(ceiling(10.0)).is_none() && !std::thread::panicking() {
            panic!("the fixture agent was not reaped after SIGKILL");
        }
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(ceiling(20.0))
        .build()
        .unwrap()
}

/// `(status, json body)`.
pub async fn call(method: reqwest::Method, url: &str, body: Option<Value>) -> (u16, Value) {
    let mut request = http().request(method, url);
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request to the fixture agent");
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let value = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, value)
}

pub async fn get(url: &str) -> (u16, Value) {
    call(reqwest::Method::GET, url, None).await
}

pub async fn post(url: &str, body: Value) -> (u16, Value) {
    call(reqwest::Method::POST, url, Some(body)).await
}

pub async fn new_session(agent: &Agent) -> String {
    let (status, session) = post(&agent.url("/session"), json!({"title": "t"})).await;
    assert_eq!(status, 200, "{session}");
    session["id"].as_str().unwrap().to_string()
}

pub fn text_prompt(text: &str) -> Value {
    json!({"parts": [{"type": "text", "text": text}]})
}

pub fn decision_prompt() -> Value {
    json!({"parts": [{"type": "text", "text": "Decide the fixture."}],
           "format": {"type": "json_schema", "schema": {"type": "object",
               "properties": {"decision": {"type": "string", "enum": ["advance", "iterate", "blocked"]},
                              "summary": {"type": "string"}, "reason": {"type": "string"}},
               "required": ["decision"], "additionalProperties": false}}})
}

/// What the SSE stream delivered.
#[derive(Debug)]
pub enum Frame {
    Event(Value),
    /// A frame that is not exactly one `data: {json}` line.
    Bad(String),
    /// The body ended.
    End,
}

/// One `GET /event` subscription, parsed by hand so frame syntax is checked too.
pub struct Events {
    rx: tokio::sync::mpsc::UnboundedReceiver<Frame>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Events {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Events {
    /// Subscribes and returns once `server.connected` (which must come first) arrived.
    pub async fn subscribe(agent: &Agent) -> Events {
        Self::subscribe_at(agent, "/event", None).await
    }

    /// [`Events::subscribe`] to `path` (`/event?directory=…`), with one header if given.
    pub async fn subscribe_at(agent: &Agent, path: &str, header: Option<(&str, &str)>) -> Events {
        let mut request = reqwest::Client::new().get(agent.url(path));
        if let Some((name, value)) = header {
            request = request.header(name, value);
        }
        let response = request.send().await.expect("subscribe");
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            let mut body = response.bytes_stream();
            let mut buf = String::new();
            while let Some(Ok(chunk)) = body.next().await {
                buf.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buf.find("\n\n") {
                    let frame: String = buf.drain(..end + 2).collect();
                    let frame = frame.trim_end_matches('\n');
                    let parsed = frame
                        .strip_prefix("data: ")
                        .filter(|d| !d.contains('\n'))
                        .and_then(|d| serde_json::from_str::<Value>(d).ok());
                    let _ = tx.send(match parsed {
                        Some(v) => Frame::Event(v),
                        None => Frame::Bad(frame.to_string()),
                    });
                }
            }
            let _ = tx.send(Frame::End);
        });
        let mut events = Events { rx, task };
        match events.next(ceiling(5.0)).await {
            Frame::Event(e) => assert_eq!(e["type"], "server.connected", "first frame: {e}"),
            other => panic!("first frame: {other:?}"),
        }
        events
    }

    pub async fn next(&mut self, within: Duration) -> Frame {
        match tokio::time::timeout(within, self.rx.recv()).await {
            Ok(Some(frame)) => frame,
            Ok(None) => Frame::End,
            Err(_) => panic!("no event within {within:?}"),
        }
    }

    /// Collects events (heartbeats included) until `stop` matches one, within `within`.
    /// Panics on a malformed frame; returns `(events, ended)` where `ended` says the stream
    /// closed before `stop` matched.
    pub async fn until(
        &mut self,
        within: Duration,
        stop: impl Fn(&Value) -> bool,
    ) -> (Vec<Value>, bool) {
        let deadline = tokio::time::Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match tokio::time::timeout(left, self.rx.recv()).await {
                Ok(Some(Frame::Event(e))) => {
                    let done = stop(&e);
                    seen.push(e);
                    if done {
                        return (seen, false);
                    }
                }
                Ok(Some(Frame::Bad(frame))) => panic!("malformed SSE frame: {frame:?}"),
                Ok(Some(Frame::End)) | Ok(None) => return (seen, true),
                Err(_) => panic!(
                    "stop event not seen within {within:?}; saw types {:?}",
                    seen.iter().map(|e| e["type"].clone()).collect::<Vec<_>>()
                ),
            }
        }
    }

    /// Events of one turn of `session`, up to its `session.idle`.
    pub async fn turn(&mut self, session: &str) -> Vec<Value> {
        let (events, ended) = self
            .until(ceiling(20.0), |e| {
                e["type"] == "session.idle" && e["properties"]["sessionID"] == session
            })
            .await;
        assert!(!ended, "stream ended mid-turn");
        events
    }
}

/// The last `message.updated` of the assistant in `events`.
pub fn final_assistant(events: &[Value]) -> Value {
    events
        .iter()
        .rev()
        .find(|e| e["type"] == "message.updated" && e["properties"]["info"]["role"] == "assistant")
        .map(|e| e["properties"]["info"].clone())
        .expect("an assistant message.updated")
}

pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .filter(|t| t != "server.heartbeat")
        .collect()
}

/// Prompts asynchronously and collects the turn's events.
pub async fn prompt_turn(
    agent: &Agent,
    events: &mut Events,
    session: &str,
    body: Value,
) -> Vec<Value> {
    let response = http()
        .post(agent.url(&format!("/session/{session}/prompt_async")))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    events.turn(session).await
}
