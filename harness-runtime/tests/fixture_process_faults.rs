//! One test per process fault of the fixture agent, observed from outside the process.

mod fixture_common;

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use fixture_common::*;
use harness_runtime::fixture::{Fault, FixtureControl};
use nix::sys::signal::{Signal, kill};
use nix::unistd::{Pid, getsid};

fn home_with(faults: &[Fault]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let control = FixtureControl::attached_to(home.path()).unwrap();
    for fault in faults {
        control.inject(fault.clone()).unwrap();
    }
    home
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_ready_after_delays_the_listening_line_and_health() {
    let home = home_with(&[Fault::ReadyAfter(Duration::from_millis(1500))]);
    let (agent, start, elapsed) = Agent::spawn(home.path(), &[]);
    assert!(matches!(start, Start::Listening(_)), "{start:?}");
    assert!(
        elapsed >= Duration::from_millis(1500),
        "ready after {elapsed:?}"
    );
    assert_eq!(get(&agent.url("/global/health")).await.0, 200);
}

#[test]
fn fault_never_ready_prints_nothing_and_keeps_running() {
    let home = home_with(&[Fault::NeverReady]);
    let (mut agent, start, _) = Agent::spawn_within(home.path(), &[], ceiling(2.0));
    assert!(matches!(start, Start::TimedOut), "{start:?}");
    assert!(
        agent.wait_exit(Duration::ZERO).is_none(),
        "still running, never ready"
    );
    agent.signal(Signal::SIGTERM);
    assert!(
        agent.wait_exit(ceiling(5.0)).is_some(),
        "a SIGTERM still ends it"
    );
}

#[test]
fn fault_exit_during_start_is_seen_as_an_exit() {
    let home = home_with(&[Fault::ExitDuringStart]);
    let (agent, start, _) = Agent::spawn(home.path(), &[]);
    match start {
        Start::Exited(status) => assert_eq!(status.code(), Some(1)),
        other => panic!("expected an exit, got {other:?}"),
    }
    assert!(
        agent.stderr().contains("exiting during start"),
        "{}",
        agent.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_exit_mid_turn_ends_stream_and_process() {
    let home = home_with(&[Fault::ExitMidTurn]);
    let mut agent = Agent::ready(home.path());
    let mut events = Events::subscribe(&agent).await;
    let sid = new_session(&agent).await;
    // The 204 may or may not get out before the exit: only the stream and the exit are asserted.
    let _ = http()
        .post(agent.url(&format!("/session/{sid}/prompt_async")))
        .json(&text_prompt("hi"))
        .send()
        .await;
    let (seen, ended) = events.until(ceiling(10.0), |_| false).await;
    assert!(ended, "the event stream ends");
    assert!(
        !types(&seen).contains(&"session.idle".to_string()),
        "the turn never ends"
    );
    let status = agent.wait_exit(ceiling(5.0)).expect("the agent exits");
    assert_eq!(status.code(), Some(70));

    // The fault fired once: a restart on the same home serves the persisted session.
    let agent = Agent::ready(home.path());
    assert_eq!(get(&agent.url(&format!("/session/{sid}"))).await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_ignore_sigterm_needs_sigkill() {
    // Control: without the fault SIGTERM ends the agent.
    let plain = tempfile::tempdir().unwrap();
    let mut agent = Agent::ready(plain.path());
    agent.signal(Signal::SIGTERM);
    let status = agent
        .wait_exit(ceiling(5.0))
        .expect("SIGTERM ends a normal agent");
    assert_eq!(status.signal(), Some(15));

    let home = home_with(&[Fault::IgnoreSigterm]);
    let mut agent = Agent::ready(home.path());
    agent.signal(Signal::SIGTERM);
    assert!(
        agent.wait_exit(ceiling(1.0)).is_none(),
        "SIGTERM must leave it alive"
    );
    assert_eq!(get(&agent.url("/global/health")).await.0, 200);
    agent.signal(Signal::SIGKILL);
    let status = agent.wait_exit(ceiling(5.0)).expect("SIGKILL ends it");
    assert_eq!(status.signal(), Some(9));
}

/// Kills the grandchild whatever happens in the test.
struct KillOnDrop(Pid);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = kill(self.0, Signal::SIGKILL);
    }
}

#[test]
fn fault_detached_grandchild_outlives_the_agent_with_the_inherited_env() {
    let home = home_with(&[Fault::DetachedGrandchild]);
    let marker = format!("fixture-sweep-{}", std::process::id());
    let mut agent = Agent::ready_with(home.path(), &[("LIVE_SWEEP_MARKER", &marker)]);
    let pid: i32 = std::fs::read_to_string(home.path().join("grandchild.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let grandchild = KillOnDrop(Pid::from_raw(pid));
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let needle = format!("LIVE_SWEEP_MARKER={marker}");
    assert!(
        environ
            .split(|b| *b == 0)
            .any(|entry| entry == needle.as_bytes()),
        "the grandchild inherits the environment"
    );
    assert_eq!(
        getsid(Some(grandchild.0)).unwrap(),
        grandchild.0,
        "its own session"
    );
    assert_ne!(
        getsid(Some(grandchild.0)).unwrap(),
        getsid(Some(agent.pid())).unwrap()
    );

    agent.signal(Signal::SIGKILL);
    assert!(agent.wait_exit(ceiling(5.0)).is_some());
    assert!(kill(grandchild.0, None).is_ok(), "it outlives the agent");
    drop(grandchild);
}
