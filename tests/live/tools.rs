//! Tool calls against real OpenCode and the scripted model: their effects on disk, what the
//! model sees of their results, and no tool process outliving the agent.
//!
//! Argument names are those OpenCode 1.18.33 offers in its tool schemas (`bash`: `command`;
//! `write`: `filePath`, `content`; `edit`: `filePath`, `oldString`, `newString`).

use harness_runtime::client::ToolStatus;
use harness_runtime::model::ModelRequest;
use harness_runtime::prelude::*;
use serde_json::Value;

/// The text of the last message of `request` when it is a tool result (what the model saw of
/// the tool's output), else `None`.
fn tool_result_seen(request: &ModelRequest) -> Option<String> {
    let last = request.raw["messages"].as_array()?.last()?;
    if last["role"] != "tool" {
        return None;
    }
    Some(match &last["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    })
}

#[live_agent_test(timeout = "120s")]
async fn bash_command_runs_in_the_workspace(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo hi > out.txt && cat out.txt"}),
        ))
        .reply(Reply::text("Wrote out.txt."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Write hi to out.txt").await?;

    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    let out = std::fs::read_to_string(agent.workspace().join("out.txt"))?;
    anyhow::ensure!(out == "hi\n", "out.txt holds {out:?}");
    let call = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Completed,
        "bash ended {:?}",
        call.status
    );
    anyhow::ensure!(
        call.output.as_deref().map(str::trim) == Some("hi"),
        "bash output {:?}",
        call.output
    );
    anyhow::ensure!(turn.text == "Wrote out.txt.", "text was {:?}", turn.text);

    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 2, "{} model requests", requests.len());
    anyhow::ensure!(
        !requests[0].follows_tool_result() && requests[1].follows_tool_result(),
        "the second request must carry the tool result"
    );
    let seen = tool_result_seen(&requests[1]).unwrap_or_default();
    anyhow::ensure!(
        seen.trim() == "hi",
        "the model saw the tool result {seen:?}"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record("files", json!({"out.txt": out}));
    live.evidence()
        .record("tool_result_seen_by_model", seen.trim());
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn write_then_edit_a_file(live: &mut Live) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    let file = agent.workspace().join("notes.txt");
    let path = file.display().to_string();
    live.model()
        .reply(Reply::tool_call(
            "write",
            json!({"filePath": path, "content": "alpha\nbeta\n"}),
        ))
        .reply(Reply::tool_call(
            "edit",
            json!({"filePath": path, "oldString": "beta", "newString": "gamma"}),
        ))
        .reply(Reply::text("Edited notes.txt."));
    let session = agent.create_session().await?;
    let turn = session.prompt("Create notes.txt, then edit it").await?;

    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    let tools: Vec<(&str, &ToolStatus)> = turn
        .tool_calls
        .iter()
        .map(|c| (c.tool.as_str(), &c.status))
        .collect();
    anyhow::ensure!(
        tools
            == [
                ("write", &ToolStatus::Completed),
                ("edit", &ToolStatus::Completed)
            ],
        "tool calls {:?}",
        turn.tool_calls
    );
    let content = std::fs::read_to_string(&file)?;
    anyhow::ensure!(content == "alpha\ngamma\n", "notes.txt holds {content:?}");

    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 3, "{} model requests", requests.len());
    anyhow::ensure!(
        requests[1].follows_tool_result() && requests[2].follows_tool_result(),
        "each request after a tool call must carry its result"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record(
        "tool_inputs",
        turn.tool_calls
            .iter()
            .map(|c| json!({"tool": c.tool, "input": c.input}))
            .collect::<Vec<_>>(),
    );
    let seen: Vec<String> = requests[1..]
        .iter()
        .map(|r| tool_result_seen(r).unwrap_or_default())
        .collect();
    anyhow::ensure!(
        seen.iter().all(|s| s.contains("successfully")),
        "the model saw the tool results {seen:?}"
    );
    live.evidence().record("tool_results_seen_by_model", &seen);
    live.evidence()
        .record("files", json!({"notes.txt": content}));
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// Whether `pid` still names a live process (a zombie awaiting its reaper counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may itself hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The command line of `pid`, arguments joined by spaces.
fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            raw.split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

// A server of its own: it stops its server to see the tool process swept.
#[live_agent_test(timeout = "120s", isolation = "server")]
async fn detached_tool_process_ends_with_the_agent(live: &mut Live) -> anyhow::Result<()> {
    // Detached twice over: its own session (setsid) and no inherited output, so the bash tool
    // returns at once and the sleep would outlive the server if nobody swept it.
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "setsid nohup sleep 600 </dev/null >/dev/null 2>&1 & echo $! > sleep.pid"}),
        ))
        .reply(Reply::text("Started."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session
        .prompt("Start a long sleep in the background")
        .await?;
    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    let call = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Completed,
        "bash ended {:?}",
        call.status
    );

    let pid_file = agent.workspace().join("sleep.pid");
    let pid: u32 = std::fs::read_to_string(&pid_file)?.trim().parse()?;
    let server = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("the server is not running"))?;
    let before = alive(pid);
    let command = cmdline(pid);
    anyhow::ensure!(
        before,
        "the sleep (pid {pid}) is not running before the stop"
    );
    anyhow::ensure!(
        command.contains("sleep 600"),
        "pid {pid} runs {command:?}, not the sleep"
    );
    anyhow::ensure!(
        session_of(pid) != session_of(server),
        "the sleep shares the server's session: it would not test detachment"
    );

    agent.stop().await?;
    anyhow::ensure!(!agent.is_running(), "the server still runs after stop");
    // The stop returns only once every swept process has exited (it waits on pidfds).
    let after = alive(pid);
    anyhow::ensure!(
        !after,
        "the detached sleep (pid {pid}) outlived the agent: {}",
        cmdline(pid)
    );

    live.evidence().record_turn(&turn);
    live.evidence().record(
        "detached_sleep",
        json!({
            "own_session": true,
            "alive_before_stop": before,
            "alive_after_stop": after,
        }),
    );
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// The session id (field 6 of `/proc/<pid>/stat`), or 0 when unknown.
fn session_of(pid: u32) -> u32 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace().nth(3)?.parse().ok()
        })
        .unwrap_or(0)
}
