//! Provisioning real OpenCode: restarts keep sessions (the database lives in the root), parallel
//! scenarios are isolated from each other, a retained root keeps its evidence, and the log tail
//! a user sees is redacted.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

use harness_runtime::client::ClientError;
use harness_runtime::opencode::{Agent, DEFAULT_SESSION_TITLE};
use harness_runtime::prelude::*;
use harness_runtime::scaled;
use tokio::sync::watch;

/// The framework's `--- … ---` marks in a log tail (start, stop), without OpenCode's own lines.
fn marks(tail: &str) -> Vec<String> {
    tail.lines()
        .filter(|l| l.starts_with("--- "))
        .map(str::to_string)
        .collect()
}

fn db_file(root: &Path) -> PathBuf {
    root.join("opencode").join("database").join("opencode.db")
}

/// The variant of a client error, for evidence (its text names ports and timings).
fn error_kind(err: &ClientError) -> &'static str {
    match err {
        ClientError::Transport { .. } => "Transport",
        ClientError::Http { .. } => "Http",
        ClientError::Timeout { .. } => "Timeout",
        _ => "other",
    }
}

// A server of its own: it stops and restarts its server.
#[live_agent_test(timeout = "180s", isolation = "server")]
async fn restart_on_the_same_root_keeps_the_session(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let root = agent.root().to_path_buf();
    let first_pid = agent.pid();
    let session = agent.create_session().await?;
    let id = session.id().to_string();

    agent.stop().await?;
    anyhow::ensure!(!agent.is_running(), "still running after stop");
    let stopped = match agent.client().health().await {
        Ok(health) => anyhow::bail!("a stopped server answered health: {health:?}"),
        Err(e) => e,
    };
    anyhow::ensure!(
        matches!(stopped, ClientError::Transport { .. }),
        "health of a stopped server: {stopped}"
    );

    agent.start().await?;
    anyhow::ensure!(
        agent.is_running() && agent.pid() != first_pid,
        "no new process"
    );
    anyhow::ensure!(agent.root() == root, "the restart moved the root");
    // A new client: the restart may have had to take another port.
    let client = agent.client();
    let info = client.get_session(&id).await?;
    anyhow::ensure!(info.id == id, "another session came back");
    anyhow::ensure!(
        info.title == DEFAULT_SESSION_TITLE,
        "title was {:?}",
        info.title
    );
    let listed: Vec<String> = client
        .list_sessions()
        .await?
        .into_iter()
        .map(|s| s.id)
        .collect();
    anyhow::ensure!(listed == [id.clone()], "listed {listed:?}");

    // The tail a user sees: OpenCode's own lines and the framework's marks, redacted.
    let tail = agent.log_tail(200);
    let port = agent.port().to_string();
    anyhow::ensure!(
        tail.contains("listening on http://127.0.0.1:[port]"),
        "no redacted listening line in:\n{tail}"
    );
    anyhow::ensure!(
        !tail.contains(&format!(":{port}")),
        "unredacted port in:\n{tail}"
    );
    anyhow::ensure!(
        !tail.contains(&root.display().to_string()),
        "unredacted root in:\n{tail}"
    );
    let marks = marks(&tail);
    anyhow::ensure!(marks.len() == 3, "marks: {marks:?}");

    live.evidence()
        .record("health_while_stopped", error_kind(&stopped));
    live.evidence().record("title_after_restart", &info.title);
    live.evidence()
        .record("sessions_listed_after_restart", listed.len());
    live.evidence().record("marks", &marks);
    live.assert_evidence();
    Ok(())
}

// A server of its own: it stops its server and reads the database in its root.
#[live_agent_test(timeout = "180s", isolation = "server")]
async fn stop_and_retain_keeps_the_root_with_its_database_and_logs(
    live: &mut Live,
) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let root = agent.root().to_path_buf();
    agent.stop_and_retain().await?;
    anyhow::ensure!(!agent.is_running(), "still running after stop_and_retain");
    let kept: Vec<&str> = [
        "workspace",
        "home",
        "opencode.stdout.log",
        "opencode.stderr.log",
    ]
    .into_iter()
    .filter(|name| root.join(name).exists())
    .collect();
    anyhow::ensure!(kept.len() == 4, "kept only {kept:?}");
    // The session reached the retained database (SQLite keeps ids as text; the WAL may hold it).
    let db = db_file(&root);
    let stored = [db.clone(), db.with_extension("db-wal")]
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .any(|bytes| {
            bytes
                .windows(session.id().len())
                .any(|w| w == session.id().as_bytes())
        });
    anyhow::ensure!(stored, "the session id is not in the retained database");
    let stdout = std::fs::read_to_string(root.join("opencode.stdout.log"))?;
    anyhow::ensure!(stdout.contains("listening on"), "stdout log: {stdout}");

    live.evidence().record("kept", &kept);
    live.evidence().record("session_in_database", stored);
    live.assert_evidence();
    // The retention itself is proven above; this suite must not leave temp dirs behind.
    std::fs::remove_dir_all(&root)?;
    Ok(())
}

/// One member of the isolation pair, as published to its peer.
#[derive(Clone, Debug)]
struct Peer {
    root: PathBuf,
    port: u16,
    session: String,
    running: bool,
    checked: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Side {
    Left,
    Right,
}

impl Side {
    fn index(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
    fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// Where the pair meets: both scenarios run in this process, on their own runtimes (a watch
/// channel works across runtimes).
static BOARD: LazyLock<watch::Sender<[Option<Peer>; 2]>> =
    LazyLock::new(|| watch::Sender::new([None, None]));

fn publish(side: Side, f: impl FnOnce(&mut Peer)) {
    BOARD.send_modify(|board| {
        if let Some(peer) = board[side.index()].as_mut() {
            f(peer);
        }
    });
}

/// Waits (bounded) until the `side` entry of the board satisfies `ready`.
async fn wait_for(side: Side, ceiling: Duration, ready: impl Fn(&Peer) -> bool) -> Option<Peer> {
    let mut rx = BOARD.subscribe();
    let seen = rx.wait_for(|board| board[side.index()].as_ref().is_some_and(&ready));
    match tokio::time::timeout(ceiling, seen).await {
        Ok(Ok(board)) => board[side.index()].clone(),
        _ => None,
    }
}

/// Provisions an agent, then meets the peer scenario while both run: distinct roots, databases
/// and ports, and each server lists only its own session and does not know the peer's.
async fn isolation_member(live: &mut Live, me: Side) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let title = format!("isolation {me:?}");
    let session = agent
        .create_session_with(&CreateSession::titled(title.clone()))
        .await?;
    BOARD.send_modify(|board| {
        board[me.index()] = Some(Peer {
            root: agent.root().to_path_buf(),
            port: agent.port(),
            session: session.id().to_string(),
            running: true,
            checked: false,
        })
    });
    let outcome = meet(live, &agent, me, session.id(), &title).await;
    publish(me, |p| p.running = false);
    outcome
}

async fn meet(
    live: &mut Live,
    agent: &Agent,
    me: Side,
    mine: &str,
    title: &str,
) -> anyhow::Result<()> {
    // The peer starts its own OpenCode (3–16 s of CPU) possibly after another scenario.
    let Some(peer) = wait_for(me.other(), scaled(Duration::from_secs(90)), |_| true).await else {
        publish(me, |p| p.checked = true);
        return Err(live
            .skip("the peer scenario did not run alongside (run with --test-threads >= 2)")
            .into());
    };
    anyhow::ensure!(
        peer.root != agent.root(),
        "both scenarios got the same root"
    );
    anyhow::ensure!(db_file(&peer.root) != db_file(agent.root()));
    anyhow::ensure!(db_file(agent.root()).is_file(), "no database in the root");
    if peer.running {
        anyhow::ensure!(peer.port != agent.port(), "both servers on one port");
    }
    let client = agent.client();
    let listed = client.list_sessions().await?;
    let listed_titles: Vec<&str> = listed.iter().map(|s| s.title.as_str()).collect();
    anyhow::ensure!(
        listed.len() == 1 && listed[0].id == mine,
        "listed {listed_titles:?}"
    );
    let foreign = match client.get_session(&peer.session).await {
        Ok(info) => anyhow::bail!("the peer's session is visible: {:?}", info.title),
        Err(e) => e,
    };
    anyhow::ensure!(
        foreign.is_not_found(),
        "looking up the peer's session: {foreign}"
    );
    publish(me, |p| p.checked = true);
    // Stay up until the peer checked against this running server too.
    if peer.running
        && wait_for(me.other(), scaled(Duration::from_secs(60)), |p| p.checked)
            .await
            .is_none()
    {
        anyhow::bail!("the peer scenario never finished its checks");
    }

    live.evidence().record("listed_titles", &listed_titles);
    live.evidence().record("own_title", title);
    live.evidence()
        .record("peer_session_lookup", foreign.error_name().unwrap_or("404"));
    live.evidence().record("distinct_roots", true);
    live.assert_evidence();
    Ok(())
}

// A server of its own: it asserts a database and a port of its own. It meets its peer inside
// this process, so nextest (a process per test) lists it ignored.
#[live_agent_test(
    timeout = "300s",
    isolation = "server",
    needs_peer = "parallel_isolation_right"
)]
async fn parallel_isolation_left(live: &mut Live) -> anyhow::Result<()> {
    isolation_member(live, Side::Left).await
}

// A server of its own: it asserts a database and a port of its own. Meets its peer as above.
#[live_agent_test(
    timeout = "300s",
    isolation = "server",
    needs_peer = "parallel_isolation_left"
)]
async fn parallel_isolation_right(live: &mut Live) -> anyhow::Result<()> {
    isolation_member(live, Side::Right).await
}
