//! The real `opencode` 1.18.33 CLI (`node_modules/.bin/opencode`, installed by `npm ci`)
//! against the fixture agent: `opencode run --attach URL "hello"` must print the turn's text
//! every time. It subscribes to `/event` and posts the blocking prompt at once, and prints only
//! what the stream delivered before the prompt answered, so a turn that publishes before the
//! stream is open loses its output. The CLI runs in a root made as the harness makes an agent's.
//! Every check runs twice: attached to the agent, and through a forwarder in front of it (as a
//! product under test reaches an agent), which must change nothing.
//! Without OpenCode each test is skipped with the reason, and fails under `CI` or `LIVE_STRICT=1`.

use crate::fixture_common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fixture_common::*;
use harness_runtime::testing::Forwarder;
use harness_selftest::prerequisites::{self, Prerequisite::OpenCode, Test};
use harness_selftest::test;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(fixture_real_cli_run_attach_prints_the_reply_20_times_out_of_20).needs(OpenCode),
        test!(fixture_real_cli_run_attach_continues_resumes_and_forks).needs(OpenCode),
        test!(fixture_real_cli_run_attach_format_json_prints_parseable_events_with_the_text)
            .needs(OpenCode),
        test!(fixture_real_cli_run_attach_command_runs_a_listed_command).needs(OpenCode),
        test!(forwarded_run_attach_prints_the_reply_20_times_out_of_20).needs(OpenCode),
        test!(forwarded_run_attach_continues_resumes_and_forks).needs(OpenCode),
        test!(forwarded_run_attach_format_json_prints_parseable_events_with_the_text)
            .needs(OpenCode),
        test!(forwarded_run_attach_command_runs_a_listed_command).needs(OpenCode),
        test!(a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict),
    ]
}

/// What the CLI attaches to.
#[derive(Clone, Copy, Debug)]
enum Via {
    /// The agent's own URL.
    Agent,
    /// A forwarder in front of the agent (`harness_runtime::testing::Forwarder`).
    Forwarder,
}

/// The URL the CLI attaches to for `via`, with the forwarder serving it (kept while in use).
fn attach_url(agent: &Agent, via: Via) -> (String, Option<Forwarder>) {
    match via {
        Via::Agent => (agent.base.clone(), None),
        Via::Forwarder => {
            let forwarder = Forwarder::start(&agent.base).expect("start the forwarder");
            (forwarder.url(), Some(forwarder))
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_real_cli_run_attach_prints_the_reply_20_times_out_of_20() {
    twenty(Via::Agent).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_run_attach_prints_the_reply_20_times_out_of_20() {
    twenty(Via::Forwarder).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_real_cli_run_attach_continues_resumes_and_forks() {
    sessions(Via::Agent).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_run_attach_continues_resumes_and_forks() {
    sessions(Via::Forwarder).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_real_cli_run_attach_format_json_prints_parseable_events_with_the_text() {
    format_json(Via::Agent).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_run_attach_format_json_prints_parseable_events_with_the_text() {
    format_json(Via::Forwarder).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_real_cli_run_attach_command_runs_a_listed_command() {
    command(Via::Agent).await
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn forwarded_run_attach_command_runs_a_listed_command() {
    command(Via::Forwarder).await
}

/// The CLI, found as the harness finds OpenCode (`LIVE_OPENCODE_BIN`, `node_modules`, `PATH`).
fn opencode() -> PathBuf {
    harness_runtime::testing::find_opencode(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// What one CLI run left: exit code, stdout, stderr.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the CLI in `client`'s root, killed (its whole process group) at `within`.
async fn cli(args: &[&str], client: &ClientRoot, within: Duration) -> Run {
    let mut command = tokio::process::Command::from(client.command(opencode()));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = command.spawn().expect("start the opencode CLI");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    match tokio::time::timeout(within, child.wait_with_output()).await {
        Ok(output) => {
            let output = output.expect("the CLI's output");
            Run {
                code: output.status.code(),
                stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            }
        }
        Err(_) => {
            let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
            panic!("`opencode {}` did not end within {within:?}", args[0]);
        }
    }
}

async fn twenty(via: Via) {
    let home = tempfile::tempdir().unwrap();
    let client = ClientRoot::new("fixture_real_cli::twenty");
    let agent = Agent::ready(home.path());
    let (base, _forwarder) = attach_url(&agent, via);
    let mut failures = Vec::new();
    for round in 1..=20 {
        let run = cli(&["run", "--attach", &base, "hello"], &client, ceiling(60.0)).await;
        if run.code != Some(0) || run.stdout.trim() != "Fixture completed." {
            // The URL and temp paths are volatile: they stay out of the message.
            let redact = |text: &str| client.redact(&text.replace(&base, "<fixture-url>"));
            let stderr = redact(&run.stderr);
            let tail: String = stderr
                .chars()
                .skip(stderr.chars().count().saturating_sub(300))
                .collect();
            failures.push(format!(
                "run {round}: exit {:?}, stdout {:?}, stderr tail {tail:?}",
                run.code,
                redact(&run.stdout),
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 20 runs ({via:?}) did not print the reply:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `--continue`, `--session` and `--fork` against the fixture: each prints the reply, and the
/// turn lands in the session the flag names (a fork is a new session titled `… (fork #1)`).
async fn sessions(via: Via) {
    let home = tempfile::tempdir().unwrap();
    let client = ClientRoot::new("fixture_real_cli::sessions");
    let agent = Agent::ready(home.path());
    let (base, _forwarder) = attach_url(&agent, via);
    let run = |args: Vec<String>| {
        let client = &client;
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let run = cli(&args, client, ceiling(60.0)).await;
            assert_eq!(
                run.code,
                Some(0),
                // Named by its message: the URL and session ids are volatile.
                "`opencode run --attach` of {:?} failed",
                args.last()
            );
            assert_eq!(
                run.stdout.trim(),
                "Fixture completed.",
                "reply of {:?}",
                args.last()
            );
        }
    };
    let attach = |extra: &[&str]| {
        let mut args = vec!["run".to_string(), "--attach".into(), base.clone()];
        args.extend(extra.iter().map(|a| a.to_string()));
        args
    };
    let sessions = || async {
        let (status, list) = get(&agent.url("/session")).await;
        assert_eq!(status, 200);
        list.as_array().unwrap().clone()
    };
    let user_turns = |id: String| {
        let url = agent.url(&format!("/session/{id}/message"));
        async move {
            let (_, messages) = get(&url).await;
            let messages = messages.as_array().unwrap().clone();
            messages
                .iter()
                .filter(|m| m["info"]["role"] == "user")
                .count()
        }
    };

    run(attach(&["hello"])).await;
    let first = sessions().await[0]["id"].as_str().unwrap().to_string();
    run(attach(&["--continue", "again"])).await;
    assert_eq!(sessions().await.len(), 1, "--continue made a new session");
    assert_eq!(user_turns(first.clone()).await, 2);
    run(attach(&["--session", &first, "third"])).await;
    assert_eq!(user_turns(first.clone()).await, 3);
    run(attach(&["--session", &first, "--fork", "forked"])).await;
    let all = sessions().await;
    assert_eq!(all.len(), 2, "--fork made no new session");
    let fork = all.iter().find(|s| s["id"] != first.as_str()).unwrap();
    assert!(
        fork["title"].as_str().unwrap().ends_with("(fork #1)"),
        "{fork}"
    );
    assert_eq!(
        user_turns(fork["id"].as_str().unwrap().to_string()).await,
        4
    );
    assert_eq!(user_turns(first).await, 3);
}

/// `--format json`: every stdout line is a JSON event, and a `text` event carries the reply.
async fn format_json(via: Via) {
    let home = tempfile::tempdir().unwrap();
    let client = ClientRoot::new("fixture_real_cli::json");
    let agent = Agent::ready(home.path());
    let (base, _forwarder) = attach_url(&agent, via);
    let run = cli(
        &["run", "--attach", &base, "--format", "json", "hello"],
        &client,
        ceiling(60.0),
    )
    .await;
    assert_eq!(run.code, Some(0), "`opencode run --format json` failed");
    let events: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|_| panic!("a stdout line is not JSON: {l:?}"))
        })
        .collect();
    let texts: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "text")
        .filter_map(|e| e["part"]["text"].as_str())
        .collect();
    assert_eq!(
        texts,
        ["Fixture completed."],
        "event types {:?}",
        events.iter().map(|e| e["type"].clone()).collect::<Vec<_>>()
    );
}

/// `--command init`: the CLI finds the command in `GET /command`, posts it to
/// `/session/{id}/command`, and prints the reply; the user turn is the template with the
/// arguments filled in.
async fn command(via: Via) {
    let home = tempfile::tempdir().unwrap();
    let client = ClientRoot::new("fixture_real_cli::command");
    let agent = Agent::ready(home.path());
    let (base, _forwarder) = attach_url(&agent, via);
    let run = cli(
        &[
            "run",
            "--attach",
            &base,
            "--command",
            "init",
            "keep it short",
        ],
        &client,
        ceiling(60.0),
    )
    .await;
    let redact = |text: &str| client.redact(&text.replace(&base, "<fixture-url>"));
    assert_eq!(
        run.code,
        Some(0),
        "`opencode run --command init` failed; stderr: {}",
        redact(&run.stderr)
            .chars()
            .rev()
            .take(400)
            .collect::<String>()
            .chars()
            .rev()
            .collect::<String>()
    );
    assert_eq!(run.stdout.trim(), "Fixture completed.");
    let (_, sessions) = get(&agent.url("/session")).await;
    let id = sessions[0]["id"].as_str().unwrap().to_string();
    let (_, messages) = get(&agent.url(&format!("/session/{id}/message"))).await;
    let user = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["info"]["role"] == "user")
        .expect("a user turn")
        .clone();
    let text = user["parts"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("Create or update `AGENTS.md`") && text.contains("keep it short"),
        "{text:?}"
    );
}

/// Where OpenCode is missing (here: `LIVE_OPENCODE_BIN` names no file), a test of this binary is
/// skipped with the reason, flagged ignored when listed (for nextest), and failed under `CI` or
/// `LIVE_STRICT=1`, without running.
fn a_test_without_opencode_is_skipped_and_fails_under_ci_or_strict() {
    prerequisites::assert_skipped_without_opencode(
        "fixture_real_cli::fixture_real_cli_run_attach_format_json_prints_parseable_events_with_the_text",
    );
}
