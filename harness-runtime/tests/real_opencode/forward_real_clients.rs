//! Real clients of real OpenCode (the pinned `opencode` 1.18.33 and `@opencode-ai/sdk`, both
//! installed by `npm ci`) with the scripted model, attached to the agent directly and through
//! its forwarder: the forwarder must change nothing a client sees, and logs what it sent.
//!
//! What `opencode run --attach URL` prints is decided by two races in the CLI itself
//! (`cli/cmd/run.ts`). It opens its event stream beside posting the blocking prompt, so a stream
//! the agent opens late misses what came before. And attached, it exits as soon as the prompt
//! answers (its `finish()` returns at once under `--attach`, and `index.ts` then calls
//! `process.exit()`), printing only the parts its stream loop handled by then. Real OpenCode
//! answers the blocking prompt a few milliseconds before its stream delivers the last step's
//! closing updates (the final text's `message.part.updated` with `time.end`, `step-finish`,
//! `session.idle`), so the last step's text is printed only when that race goes its way, and a
//! quick turn may print nothing at all. So the scripted turn here has two held steps: text and
//! a `read` (printed while the turn runs), let go once the agent opened the CLI's stream; then
//! an empty answer, let go once the CLI printed the first. What it prints is then the same on
//! every run, attached directly or through the forwarder.
//!
//! Without OpenCode (or node and the SDK) each test is skipped with the reason, and fails under
//! `CI` or `LIVE_STRICT=1`.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use harness_runtime::Live;
use harness_runtime::forward::WireCounters;
use harness_runtime::model::{Matcher, Reply, Rule};
use harness_runtime::opencode::{Agent, AgentOptions};
use harness_runtime::testing::{self, BareRoot};
use harness_selftest::prerequisites::{
    Prerequisite::{NodePackage, OpenCode},
    Test,
};
use harness_selftest::test;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;

/// The SDK's npm package.
const SDK: &str = "@opencode-ai/sdk";

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(the_real_cli_prints_the_same_turn_attached_directly_and_through_the_forwarder)
            .needs(OpenCode),
        test!(the_sdk_drives_real_opencode_through_the_forwarder_as_it_does_directly)
            .needs(OpenCode)
            .needs(NodePackage(SDK)),
    ]
}

fn ceiling(secs: u64) -> Duration {
    harness_runtime::scaled(Duration::from_secs(secs))
}

/// The file the scripted model reads.
const NOTES: &str = "notes.txt";

/// The text of the turn's first step, before its `read`.
const STEP_TEXT: &str = "Reading the notes.";

/// How the CLI prints a turn (`--format`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Format {
    /// Text parts on stdout, the rest on stderr.
    Default,
    /// One JSON event a line on stdout.
    Json,
}

/// What one CLI run printed, with volatile values (ids, times, paths, colours) taken out.
#[derive(Debug, PartialEq)]
struct Printed {
    code: Option<i32>,
    /// Stdout's lines from the first step's text until the last step was let go: as printed
    /// (default), or each event's shape (json).
    stdout: Vec<String>,
    /// Stderr's non-empty lines, sorted: the agent and model line comes at the first assistant
    /// message update the CLI's stream delivers, before or after the tool's line.
    stderr: Vec<String>,
}

/// A line the CLI printed, with its stream: 1 stdout, 2 stderr.
type Line = (u8, String);

/// Sends `stream`'s lines to `to` as they come; the channel closes when both streams ended.
fn lines_of(stream: impl AsyncRead + Unpin + Send + 'static, fd: u8, to: mpsc::Sender<Line>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if to.send((fd, line)).await.is_err() {
                return;
            }
        }
    });
}

/// A JSON event line's shape: its type, its part's type, and the part's text, tool, tool
/// status or finish reason where it has them.
fn shape(line: &str) -> String {
    let event: Value = serde_json::from_str(line)
        .unwrap_or_else(|_| panic!("a `--format json` line is not JSON: {line:?}"));
    let part = &event["part"];
    let mut shape = format!(
        "{} {}",
        event["type"].as_str().unwrap_or("?"),
        part["type"].as_str().unwrap_or("?")
    );
    for detail in [
        &part["text"],
        &part["tool"],
        &part["state"]["status"],
        &part["reason"],
    ] {
        if let Some(detail) = detail.as_str() {
            shape.push(' ');
            shape.push_str(detail);
        }
    }
    shape
}

/// The agent and model line the default format prints at the turn's first assistant message.
const HEADER: &str = "> build · scripted-model";

/// What the CLI has printed when the turn's held last step may go on: everything the turn's
/// first step makes it print, and (json) the second step's start.
fn printed_the_first_step(format: Format, stdout: &[String], stderr: &[String]) -> bool {
    match format {
        Format::Default => {
            stdout.iter().any(|l| l == STEP_TEXT)
                && stderr.iter().any(|l| l == HEADER)
                && stderr.iter().any(|l| l.starts_with("→ Read"))
        }
        Format::Json => stdout
            .iter()
            .position(|l| l == "step_finish step-finish tool-calls")
            .is_some_and(|at| stdout[at..].iter().any(|l| l == "step_start step-start")),
    }
}

/// How many `/event` streams of a directory the agent opened, by its own log (OpenCode 1.18.33
/// logs `event connected` once it listens for a new stream's events, before it answers).
fn streams_opened(agent: &Agent) -> usize {
    let Ok(logs) = std::fs::read_dir(agent.root().join("xdg/data/opencode/log")) else {
        return 0;
    };
    logs.flatten()
        .filter_map(|log| std::fs::read_to_string(log.path()).ok())
        .map(|log| log.matches("message=\"event connected\"").count())
        .sum()
}

/// Waits until `done` holds, looking every 20 ms, for `ceiling` at most; whether it held.
async fn wait_until(ceiling: Duration, mut done: impl FnMut() -> bool) -> bool {
    tokio::time::timeout(ceiling, async {
        let mut tick = tokio::time::interval(Duration::from_millis(20));
        while !done() {
            tick.tick().await;
        }
    })
    .await
    .is_ok()
}

/// One `opencode run --attach url` of a two-step turn (text and a `read` of [`NOTES`], then an
/// empty answer) in which nothing the CLI prints depends on its own races: the first step goes
/// once the agent opened the CLI's event stream (the CLI posts its prompt beside subscribing,
/// and a stream opened late misses what came before), the last once the CLI printed the first
/// (it exits when the prompt answers, whatever its stream has not delivered yet).
async fn run_cli(
    live: &Live,
    agent: &Agent,
    client: &BareRoot,
    url: &str,
    format: Format,
) -> Printed {
    let via = if url == agent.endpoint() {
        "the agent"
    } else {
        "the forwarder"
    };
    let notes = agent.workspace().join(NOTES).display().to_string();
    let (first, first_held) = Reply::tool_call("read", json!({ "filePath": notes }))
        .with_text(STEP_TEXT)
        .stalled();
    let (last, last_held) = Reply::text("").stalled();
    live.model().reply(first).reply(last);
    let opened = streams_opened(agent);
    let bin = testing::find_opencode(Path::new(env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{e}"));
    let mut command = tokio::process::Command::from(client.command(bin));
    command.args(["run", "--attach", url]);
    if format == Format::Json {
        command.args(["--format", "json"]);
    }
    command
        .arg("Read the notes")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = command.spawn().expect("start the opencode CLI");
    let group = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    let (to, mut lines) = mpsc::channel(64);
    lines_of(child.stdout.take().unwrap(), 1, to.clone());
    lines_of(child.stderr.take().unwrap(), 2, to);

    let subscribed = wait_until(ceiling(60), || streams_opened(agent) > opened).await;
    first_held.release();
    let ansi = regex::Regex::new("\x1b\\[[0-9;]*m").unwrap();
    let workspace = agent.workspace().display().to_string();
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let take = |(fd, line): Line, stdout: &mut Vec<String>, stderr: &mut Vec<String>| {
        let line = ansi
            .replace_all(&line, "")
            .replace(&workspace, "<workspace>");
        match (fd, format) {
            (1, Format::Json) => stdout.push(shape(&line)),
            (1, Format::Default) => stdout.push(line),
            _ if !line.trim().is_empty() => stderr.push(line.trim().to_owned()),
            _ => {}
        }
    };
    let first_step = subscribed
        && tokio::time::timeout(ceiling(60), async {
            while !printed_the_first_step(format, &stdout, &stderr) {
                match lines.recv().await {
                    Some(line) => take(line, &mut stdout, &mut stderr),
                    None => break,
                }
            }
        })
        .await
        .is_ok()
        && printed_the_first_step(format, &stdout, &stderr);
    let before = stdout.len();
    last_held.release();
    let exited = tokio::time::timeout(ceiling(60), async {
        while let Some(line) = lines.recv().await {
            take(line, &mut stdout, &mut stderr);
        }
        child.wait().await
    })
    .await;
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    assert!(
        subscribed,
        "the agent's log shows no event stream the CLI ({format:?}, via {via}) opened"
    );
    assert!(
        first_step,
        "the CLI ({format:?}, via {via}) did not print the turn's first step within the \
         ceiling; stdout {stdout:#?}, stderr {stderr:#?}"
    );
    let status = exited
        .unwrap_or_else(|_| {
            panic!("the CLI ({format:?}, via {via}) did not exit within the ceiling")
        })
        .expect("the CLI's exit status");
    assert_eq!(
        live.model().pending(),
        0,
        "the turn did not reach its last step"
    );
    // The last step closes with no text: the default format has nothing left to print. In json
    // the CLI prints the last step's `step_finish` only when its part update wins the race with
    // the prompt's answer (see the module's docs), so that line may or may not come.
    let tail = stdout.split_off(before);
    let may_come: &[&str] = match format {
        Format::Default => &[],
        Format::Json => &["step_finish step-finish stop"],
    };
    assert!(
        tail.iter().all(|line| may_come.contains(&line.as_str())),
        "the CLI ({format:?}, via {via}) printed {tail:?} after the last step was let go"
    );
    // The first step's `step_start` comes as the model's held answer begins, which may be
    // before the agent opened the CLI's stream: from the first text on, every line comes after.
    let text = stdout
        .iter()
        .position(|l| l.starts_with("text ") || l == STEP_TEXT)
        .unwrap_or(stdout.len());
    let head: Vec<String> = stdout.drain(..text).collect();
    assert!(
        head.iter().all(|line| line == "step_start step-start") && head.len() <= 1,
        "the CLI ({format:?}, via {via}) printed {head:?} before the first step's text"
    );
    stderr.sort();
    Printed {
        code: status.code(),
        stdout,
        stderr,
    }
}

/// `opencode run --attach`, attached to the agent and to its forwarder, in both formats: the
/// same exit code and the same lines both ways, the first step's text among them; through the
/// forwarder the CLI's requests are in the wire's log; and the agent served the same turn to
/// each.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_cli_prints_the_same_turn_attached_directly_and_through_the_forwarder() {
    let mut live = support::live("forward_real_clients::cli");
    let agent = support::start(&mut live).await.expect("provision opencode");
    std::fs::write(agent.workspace().join(NOTES), "remember the milk\n").unwrap();
    let client = ClientRoot::new("forward_real_clients::cli_root");

    for format in [Format::Default, Format::Json] {
        let direct = run_cli(&live, &agent, &client.0, &agent.endpoint(), format).await;
        let logged = live.wire().requests().len();
        let forwarded = run_cli(&live, &agent, &client.0, &agent.forwarded_url(), format).await;
        assert_eq!(
            forwarded, direct,
            "{format:?}: through the forwarder, then directly"
        );
        assert_eq!(direct.code, Some(0), "{format:?}: {direct:#?}");
        let (out, err): (&[&str], &[&str]) = match format {
            Format::Default => (&[STEP_TEXT], &[HEADER, "→ Read <workspace>/notes.txt"]),
            // The first step from its text on, then the second step's start.
            Format::Json => (
                &[
                    "text text Reading the notes.",
                    "tool_use tool read completed",
                    "step_finish step-finish tool-calls",
                    "step_start step-start",
                ],
                &[],
            ),
        };
        assert_eq!(direct.stdout, out, "{format:?}");
        assert_eq!(direct.stderr, err, "{format:?}");

        // The CLI's requests: its event stream and its prompt race, so in any order.
        let mut requests: Vec<String> = live.wire().requests()[logged..]
            .iter()
            .map(|r| format!("{} {} {:?}", r.method, r.route, r.status))
            .collect();
        requests.sort();
        assert_eq!(
            requests,
            [
                "GET /config Some(200)",
                "GET /event Some(200)",
                "POST /session Some(200)",
                "POST /session/{sessionID}/message Some(200)",
            ],
            "{format:?}"
        );
    }
    let WireCounters { events, .. } = live.wire().counters();
    assert_eq!(events["server.connected"], 2, "one stream a forwarded run");
    assert!(events["message.part.updated"] >= 2 * 5, "{events:?}");

    // The agent served the same turn whoever attached: the user's message, the step with text
    // and a read, the empty answer.
    let observed = agent.observed().await;
    let served: Vec<_> = observed
        .sessions
        .iter()
        .map(|s| {
            (
                &s.summary.messages,
                &s.summary.tool_calls,
                &s.summary.errors,
            )
        })
        .collect();
    assert_eq!(served.len(), 4, "{observed:#?}");
    assert_eq!(served[0], served[1], "default format: directly, forwarded");
    assert_eq!(served[2], served[3], "json format: directly, forwarded");
    assert_eq!(served[0], served[2], "both formats");
    let (messages, tools, errors) = served[0];
    let parts: Vec<String> = messages
        .iter()
        .map(|m| format!("{}: {}", m.role, m.parts.join(", ")))
        .collect();
    // The empty answer has no text part: nothing for the CLI to print after the first step.
    assert_eq!(
        parts,
        [
            "user: text",
            "assistant: step-start, text, tool, step-finish",
            "assistant: step-start, step-finish",
        ]
    );
    let tools: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| (t.tool.as_str(), t.status.as_str()))
        .collect();
    assert_eq!(tools, [("read", "completed")]);
    assert!(errors.is_empty(), "{errors:?}");
    testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}

/// A client's root, made as provisioning makes an agent's (hermetic home and environment), so
/// the CLI runs in an agent's conditions; removed on drop.
struct ClientRoot(BareRoot);

impl ClientRoot {
    fn new(name: &str) -> Self {
        ClientRoot(
            testing::bare_root(name, &json!({}))
                .unwrap_or_else(|e| panic!("could not create the client's root: {e}")),
        )
    }
}

impl Drop for ClientRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0.root);
    }
}

/// The checks `sdk.mjs` reports, in order.
const SDK_CHECKS: [&str; 8] = [
    "session.create",
    "session.get_and_list",
    "session.prompt.blocking",
    "session.prompt_async.events_until_idle",
    "permission.asked_listed_replied",
    "session.abort",
    "session.messages",
    "v1.session.prompt",
];

/// Runs `sdk.mjs` against `base` for `workspace`; returns its checks `(name, ok, detail)`.
async fn run_sdk(base: &str, workspace: &Path) -> Vec<(String, bool, String)> {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/forward_real_clients/sdk.mjs");
    let child = tokio::process::Command::new("node")
        .arg(script)
        .arg(base)
        .arg(workspace)
        .env("SDK_CEILING_MS", ceiling(20).as_millis().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start node");
    // Each check has a ceiling in the script: the script ends.
    let within = ceiling(120);
    let output = tokio::time::timeout(within, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("the SDK script did not end within {within:?}"))
        .expect("the node script's output");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the SDK script exited with {:?}; stdout: {stdout}; stderr: {}",
        output.status.code(),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let check: Value =
                serde_json::from_str(line).unwrap_or_else(|_| panic!("not a check line: {line}"));
            (
                check["check"].as_str().unwrap_or_default().to_owned(),
                check["ok"] == true,
                check["detail"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The official SDK (its v2 client, the one the CLI uses, and the default v1 client) against
/// real OpenCode: sessions, a blocking prompt, events until idle, a permission asked and
/// replied, an abort, messages. Every check passes through the forwarder as it does attached
/// directly, with the same details, and the wire's log holds the SDK's requests.
#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn the_sdk_drives_real_opencode_through_the_forwarder_as_it_does_directly() {
    let mut live = support::live("forward_real_clients::sdk");
    let reads_ask = json!({"*": "allow", "external_directory": "deny", "read": "ask"});
    let agent = live
        .opencode_with(support::agents::patient(
            AgentOptions::default().permission(reads_ask),
        ))
        .await
        .expect("provision opencode");
    std::fs::write(agent.workspace().join(NOTES), "remember the milk\n").unwrap();
    let notes = agent.workspace().join(NOTES).display().to_string();
    let asks = |text: &'static str| Matcher::last_user_text_contains(text);
    live.model()
        .rule(Rule::when(Matcher::follows_tool_result()).reply(Reply::text("Read it.")))
        .rule(
            Rule::when(asks("read the notes"))
                .reply(Reply::tool_call("read", json!({ "filePath": notes }))),
        )
        // The model never answers: the script aborts the turn.
        .rule(Rule::when(asks("wait")).reply(Reply::hang()))
        .rule(Rule::when(asks("again")).reply(Reply::text("Again.")))
        .rule(Rule::when(asks("hello")).reply(Reply::text("Hello from the scripted model.")));

    let direct = run_sdk(&agent.endpoint(), agent.workspace()).await;
    let forwarded = run_sdk(&agent.forwarded_url(), agent.workspace()).await;
    let names: Vec<&str> = forwarded.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, SDK_CHECKS, "{forwarded:#?}");
    let failed: Vec<_> = forwarded.iter().filter(|(_, ok, _)| !ok).collect();
    assert!(failed.is_empty(), "through the forwarder: {failed:#?}");
    assert_eq!(forwarded, direct, "through the forwarder, then directly");

    let WireCounters {
        requests, events, ..
    } = live.wire().counters();
    let statuses: Vec<Option<u16>> = live.wire().requests().iter().map(|r| r.status).collect();
    assert!(
        statuses
            .iter()
            .all(|s| s.is_some_and(|s| (200..300).contains(&s))),
        "{:#?}",
        live.wire().requests()
    );
    for route in [
        "POST /session",
        "GET /session/{sessionID}",
        "GET /session",
        "POST /session/{sessionID}/message",
        "GET /event",
        "POST /session/{sessionID}/prompt_async",
        "GET /permission",
        "POST /permission/{requestID}/reply",
        "POST /session/{sessionID}/abort",
        "GET /session/{sessionID}/message",
    ] {
        assert!(requests.contains_key(route), "{route} in {requests:#?}");
    }
    assert_eq!(events["permission.asked"], 1, "{events:?}");
    assert_eq!(events["permission.replied"], 1, "{events:?}");
    assert!(events["session.idle"] >= 3, "{events:?}");
    testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}
