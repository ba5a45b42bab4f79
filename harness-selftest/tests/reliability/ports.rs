//! Ports: many fixture servers provisioned at once, each through the harness's own path (port
//! choice, spawn, readiness, stop), each reachable only through its own port.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::client::CreateSession;
use harness_runtime::opencode::{Agent, ProvisionError};
use harness_runtime::testing::{self, ScenarioInfo};
use harness_runtime::{AgentKind, Live};
use harness_selftest::prerequisites::Test;
use harness_selftest::test;

use crate::io_support::{ceiling, use_roles_bin};

/// What one server did.
struct Started {
    live: Live,
    agent: Agent,
    ready_after: Duration,
}

/// A failed start, and whether it was the port being taken.
struct Failed {
    live: Live,
    bind: bool,
    error: String,
}

fn scenario(i: usize) -> Live {
    testing::live(ScenarioInfo {
        name: format!("reliability::ports::server_{i}"),
        options: ScenarioOptions {
            agent: AgentKind::Fixture,
            ..ScenarioOptions::DEFAULT
        },
        manifest_dir: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
    })
}

async fn start(i: usize) -> Result<Started, Failed> {
    let mut live = scenario(i);
    let began = Instant::now();
    match live.opencode().await {
        Ok(agent) => Ok(Started {
            live,
            agent,
            ready_after: began.elapsed(),
        }),
        Err(e) => {
            // The fixture says "cannot listen on the requested port" when its bind fails; a
            // start that lost its port on every attempt says so in its own error.
            let bind = matches!(&e, ProvisionError::PortLost { .. })
                || matches!(&e, ProvisionError::ExitedBeforeReady { log_tail, .. }
                    if log_tail.contains("cannot listen") || log_tail.contains("in use"));
            Err(Failed {
                live,
                bind,
                error: e.to_string(),
            })
        }
    }
}

fn is_alive(pid: u32) -> bool {
    // A zombie would still have /proc/<pid>; a reaped process has none.
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Starts `n` servers at once, proves each sees only its own session through its own port,
/// stops them all and checks nothing survives. Prints the figures.
fn round(n: usize, label: &str) {
    use_roles_bin();
    let began = Instant::now();
    // Each start has its own ceiling (readiness, scaled); the threads end when they do.
    let results = on_threads((0..n).collect(), start);
    let all_started = began.elapsed();

    let mut started = Vec::new();
    let mut failed = Vec::new();
    for r in results {
        match r {
            Ok(s) => started.push(s),
            Err(f) => failed.push(f),
        }
    }
    let bind_failures = failed.iter().filter(|f| f.bind).count();
    let mut times: Vec<Duration> = started.iter().map(|s| s.ready_after).collect();
    times.sort();
    let median = times.get(times.len() / 2).copied().unwrap_or_default();
    let max = times.last().copied().unwrap_or_default();
    // A start whose port another process took first is retried on a new port, and says so.
    let retries = started
        .iter()
        .map(|s| {
            s.agent
                .log_tail(200)
                .matches("was taken before the server bound it")
                .count()
        })
        .sum::<usize>();
    let mut ports: Vec<u16> = started.iter().map(|s| s.agent.port()).collect();
    ports.sort_unstable();
    ports.dedup();
    println!(
        "ports[{label}]: {n} servers started at once: {} ready, {} failed ({bind_failures} bind \
         failures, {retries} retried on a new port), {} distinct ports; start-to-ready median {median:.2?}, max {max:.2?}; all in \
         {all_started:.2?}",
        started.len(),
        failed.len(),
        ports.len(),
    );
    for f in &failed {
        println!("ports[{label}]: failed start: {}", f.error);
    }
    // What each retried start printed before its retry: which holder took the port.
    for s in &started {
        let tail = s.agent.log_tail(200);
        let lines: Vec<&str> = tail.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if line.contains("was taken before the server bound it") {
                let before = &lines[i.saturating_sub(3)..i];
                println!("ports[{label}]: retried: {} after {before:?}", line.trim());
            }
        }
    }

    // No cross-talk: a session made through port i is seen through port i only.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let check =
        runtime.block_on(async { tokio::time::timeout(ceiling(120), cross_talk(&started)).await });

    // Stop everything whatever the checks said, then look for survivors by pid and by mark.
    let pids: Vec<u32> = started.iter().filter_map(|s| s.agent.pid()).collect();
    let tokens: Vec<String> = started
        .iter()
        .map(|s| testing::owner_token(&s.agent))
        .collect();
    let roots: Vec<PathBuf> = started
        .iter()
        .map(|s| s.agent.root().to_path_buf())
        .collect();
    let stopping = Instant::now();
    let mut stop_errors = Vec::new();
    let mut lives: Vec<Live> = started.into_iter().map(|s| s.live).collect();
    let failures = failed.len();
    lives.extend(failed.into_iter().map(|f| f.live));
    let finished = on_threads(lives, |mut live| async move {
        testing::finish_agents(&mut live, true).await
    });
    for r in finished {
        if let Err(e) = r {
            stop_errors.push(e);
        }
    }
    let stopped_in = stopping.elapsed();
    let alive: Vec<u32> = pids.iter().copied().filter(|p| is_alive(*p)).collect();
    let carriers: usize = tokens.iter().map(|t| testing::carriers(t).len()).sum();
    let roots_left = roots.iter().filter(|r| r.exists()).count();
    println!(
        "ports[{label}]: stopped {} servers in {stopped_in:.2?}: {} pids alive, {carriers} \
         processes still carrying an owner mark, {roots_left} roots left",
        pids.len(),
        alive.len(),
    );

    let seen = check.expect("the cross-talk check did not finish within its ceiling");
    assert_eq!(failures, 0, "starts failed");
    assert_eq!(bind_failures, 0);
    assert_eq!(ports.len(), n, "every server has a port of its own");
    if let Some(ephemeral) = ephemeral_range() {
        let inside: Vec<u16> = ports
            .iter()
            .copied()
            .filter(|p| ephemeral.contains(p))
            .collect();
        assert!(
            inside.is_empty(),
            "ports where outgoing connections land ({ephemeral:?}): {inside:?}"
        );
    }
    assert_eq!(seen, n, "every server saw exactly its own session");
    assert!(stop_errors.is_empty(), "stop errors: {stop_errors:?}");
    assert!(alive.is_empty(), "survivors by pid: {alive:?}");
    assert_eq!(carriers, 0, "processes still carrying an owner mark");
    assert_eq!(roots_left, 0, "roots left behind");
}

/// The ports the kernel gives outgoing connections, where no server port may be chosen.
fn ephemeral_range() -> Option<std::ops::RangeInclusive<u16>> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut numbers = text.split_whitespace().map(|n| n.parse::<u16>().ok());
    Some(numbers.next()??..=numbers.next()??)
}

/// Creates one distinctly titled session per server, then lists every server: each must list
/// exactly its own, and must not know its neighbour's. Returns how many servers passed.
async fn cross_talk(started: &[Started]) -> usize {
    let mut ids = Vec::new();
    for (i, s) in started.iter().enumerate() {
        let session = s
            .agent
            .create_session_with(&CreateSession::titled(format!("server {i}")))
            .await
            .unwrap_or_else(|e| panic!("server {i}: create a session: {e}"));
        ids.push(session.id().to_string());
    }
    let mut passed = 0;
    for (i, s) in started.iter().enumerate() {
        let client = s.agent.client();
        let listed = client
            .list_sessions()
            .await
            .unwrap_or_else(|e| panic!("server {i}: list sessions: {e}"));
        let own: Vec<(&str, &str)> = listed
            .iter()
            .map(|l| (l.id.as_str(), l.title.as_str()))
            .collect();
        assert_eq!(
            own,
            [(ids[i].as_str(), format!("server {i}").as_str())],
            "server {i} lists exactly its own session"
        );
        let neighbour = &ids[(i + 1) % ids.len()];
        if neighbour != &ids[i] {
            let err = client
                .get_session(neighbour)
                .await
                .expect_err("a neighbour's session is unknown here");
            assert!(err.is_not_found(), "server {i}: {err}");
        }
        passed += 1;
    }
    passed
}

/// Runs `f` on every item at once, each on a thread with its own current-thread runtime, as the
/// live runner runs its trials: the harness's port choice races for real.
fn on_threads<I, T, F, Fut>(items: Vec<I>, f: F) -> Vec<T>
where
    I: Send,
    T: Send,
    F: Fn(I) -> Fut + Sync,
    Fut: std::future::Future<Output = T>,
{
    std::thread::scope(|scope| {
        let handles: Vec<_> = items
            .into_iter()
            .map(|item| {
                let f = &f;
                scope.spawn(move || {
                    tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .expect("a runtime")
                        .block_on(f(item))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a server thread panicked"))
            .collect()
    })
}

fn fifty_fixture_servers_at_once_have_their_own_ports_and_state() {
    round(50, "50");
}

fn four_rounds_of_a_hundred_servers() {
    for r in 0..4 {
        round(100, &format!("100 round {}", r + 1));
    }
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(fifty_fixture_servers_at_once_have_their_own_ports_and_state),
        test!(four_rounds_of_a_hundred_servers)
            .ignore("heavy: 4 rounds of 100 servers started at once"),
    ]
}
