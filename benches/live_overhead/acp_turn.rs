//! `acp_turn`: an ACP scenario's agent, start to the end of one scripted turn, through the
//! harness (`live.acp_agent(OpenCode)`: root, config, confined spawn, `initialize` through the
//! SDK, `session/new`, `session/prompt` with the client side serving updates) against a bare
//! ACP client of `opencode acp` (the same root layout, environment and scripted reply; JSON
//! lines written to its stdin and read from its stdout until the prompt's answer). Both clocks
//! start before the root is created and stop at the prompt's answer; stopping is outside both.

use std::process::Stdio;
use std::time::{Duration, Instant};

use harness_runtime::acp::AcpAgentKind;
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::AgentOptions;
use harness_runtime::prelude::*;
use harness_runtime::testing::{self, ModelSlot};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::{Bench, BenchError, finish, harness_against_raw};
use crate::report::Figure;
use crate::turn::{PROMPT, REPLY};

const SECTION: &str = "acp_turn";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    harness_against_raw(bench, SECTION, || harness_once(bench), || raw_once(bench)).await
}

async fn harness_once(bench: &Bench) -> Result<Duration, BenchError> {
    let mut live = bench.live("bench::acp_turn", Default::default());
    // Running before the clock starts, as on the raw side.
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let started = Instant::now();
    let turn = async {
        let agent = live.acp_agent(AcpAgentKind::OpenCode).await?;
        let session = agent.new_session().await?;
        session.prompt(PROMPT).await
    }
    .await;
    let took = started.elapsed();
    let checked = match &turn {
        Ok(turn) if turn.text() == REPLY => Ok(took),
        Ok(turn) => Err(BenchError::Harness(format!(
            "the turn answered {:?} ({})",
            turn.text(),
            turn.stop_reason()
        ))),
        Err(e) => Err(BenchError::harness(e)),
    };
    let finished = finish(live, checked.is_ok()).await;
    let took = checked?;
    finished?;
    Ok(took)
}

/// A bare `opencode acp` in a root like the harness's, driven by hand-written JSON lines.
async fn raw_once(bench: &Bench) -> Result<Duration, BenchError> {
    let mut model = ModelSlot::default();
    let config = model.opencode_config(AgentOptions::default().permission_config().clone());
    model
        .model()
        .map_err(|e| BenchError::Raw(e.to_string()))?
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let token = testing::new_token();
    testing::register_with_reaper(&token).map_err(|e| BenchError::io("start the reaper", e))?;
    let started = Instant::now();
    let bare = testing::bare_root("bench::acp_raw", &config)
        .map_err(|e| BenchError::io("create the raw root", e))?;
    bench.redactor.add_path(&bare.root, "[root]");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| BenchError::io("reserve a port", e))?
        .port();
    let stderr = std::fs::File::create(bare.root.join("stderr.log"))
        .map_err(|e| BenchError::io("create the raw agent's log", e))?;
    let mut command = tokio::process::Command::from(bare.command(&bench.opencode));
    command
        .args([
            "acp",
            "--hostname",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .env(testing::OWNER_ENV, &token)
        .kill_on_drop(true);
    let mut child = command
        .spawn()
        .map_err(|e| BenchError::io("spawn the raw opencode acp", e))?;
    let ceiling = harness_runtime::scaled(Duration::from_secs(120));
    let workspace = bare.workspace.display().to_string();
    let turn = tokio::time::timeout(ceiling, raw_turn(&mut child, &workspace)).await;
    let took = started.elapsed();
    // Stop: SIGTERM to the group, SIGKILL after the grace, sweep marked strays, remove the root.
    let reaped = crate::raw::stop_group(&mut child).await;
    testing::sweep(&token);
    let stderr_tail = || {
        let text = std::fs::read_to_string(bare.root.join("stderr.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        bench
            .redactor
            .redact(&lines[lines.len().saturating_sub(10)..].join(" | "))
    };
    let outcome = match turn {
        _ if !reaped => Err(BenchError::Raw(
            "the raw opencode acp was not reaped after SIGKILL".into(),
        )),
        Err(_) => Err(BenchError::Raw(format!(
            "the raw ACP turn did not end within {ceiling:?}; its stderr: {}",
            stderr_tail()
        ))),
        Ok(Err(e)) => Err(BenchError::Raw(format!(
            "{e}; its stderr: {}",
            stderr_tail()
        ))),
        Ok(Ok(text)) if text == REPLY => Ok(took),
        Ok(Ok(text)) => Err(BenchError::Raw(format!("the turn answered {text:?}"))),
    };
    std::fs::remove_dir_all(&bare.root).map_err(|e| BenchError::io("remove the raw root", e))?;
    model
        .finish(&bench.redactor)
        .map_err(|e| BenchError::Raw(e.to_string()))?;
    outcome
}

/// `initialize`, `session/new`, `session/prompt`, each answered before the next; the reply's
/// text from its `agent_message_chunk` updates.
async fn raw_turn(child: &mut tokio::process::Child, workspace: &str) -> Result<String, String> {
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut text = String::new();
    let requests = [
        json!({"protocolVersion": 1, "clientCapabilities": {"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": false}}),
        json!({"cwd": workspace, "mcpServers": []}),
        Value::Null,
    ];
    let methods = ["initialize", "session/new", "session/prompt"];
    let mut session = String::new();
    for (id, (method, mut params)) in methods.into_iter().zip(requests).enumerate() {
        if method == "session/prompt" {
            params = json!({"sessionId": session, "prompt": [{"type": "text", "text": PROMPT}]});
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .map_err(|e| format!("write {method}: {e}"))?;
        let answer = loop {
            let line = lines
                .next_line()
                .await
                .map_err(|e| format!("read: {e}"))?
                .ok_or_else(|| format!("stdout closed before {method} was answered"))?;
            let message: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
            if message["id"] == json!(id) && message.get("method").is_none() {
                break message;
            }
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "agent_message_chunk" {
                text.push_str(update["content"]["text"].as_str().unwrap_or_default());
            }
        };
        if let Some(error) = answer.get("error") {
            return Err(format!("{method} answered an error: {error}"));
        }
        if method == "session/new" {
            session = answer["result"]["sessionId"]
                .as_str()
                .ok_or("session/new answered no sessionId")?
                .to_string();
        }
    }
    Ok(text)
}
