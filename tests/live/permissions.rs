//! Permission asks against real OpenCode and the scripted model: answered once, always,
//! rejected, and left pending until the turn's ceiling names them.
//!
//! Each agent asks for `bash` and `edit` (which also covers `write`); everything else is
//! allowed inside the workspace.

use std::time::Duration;

use harness_runtime::client::Session;
use harness_runtime::client::{Ask, AskAnswer, AskOutcome, ClientError, Interaction, ToolStatus};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::scaled;

use crate::support::{self, no_error, prompt_answering};

/// An agent whose bash and edits ask, and a session on it.
async fn asking_session(live: &mut Live) -> anyhow::Result<(Agent, Session)> {
    let agent = live
        .opencode_with(support::asking_for(&["bash", "edit"]))
        .await?;
    let session = agent.create_session().await?;
    Ok((agent, session))
}

/// Scripts the model to run each `(command, then)` in bash and then say `then`, in order.
fn script_bash_runs(live: &Live, runs: &[(&str, &str)]) {
    for (command, then) in runs {
        live.model()
            .reply(Reply::tool_call("bash", json!({"command": command})))
            .reply(Reply::text(*then));
    }
}

/// The one permission interaction of a turn, checked: asked for `permission`, answered with
/// `reply` by this client, and settled with `reply` by the server.
fn single_permission<'t>(
    interactions: &'t [Interaction],
    permission: &str,
    reply: PermissionReply,
) -> anyhow::Result<&'t Interaction> {
    let [interaction] = interactions else {
        anyhow::bail!("expected one ask, got {interactions:?}");
    };
    let Ask::Permission(request) = &interaction.ask else {
        anyhow::bail!("expected a permission ask, got {:?}", interaction.ask);
    };
    anyhow::ensure!(
        request.permission == permission,
        "asked for {:?}, not {permission:?}",
        request.permission
    );
    anyhow::ensure!(
        interaction.answer == Some(AskAnswer::Permission(reply)),
        "this client answered {:?}",
        interaction.answer
    );
    anyhow::ensure!(
        interaction.outcome == Some(AskOutcome::PermissionReplied(reply.as_str().to_string())),
        "the server settled it as {:?}",
        interaction.outcome
    );
    Ok(interaction)
}

#[live_agent_test(timeout = "150s")]
async fn ask_answered_once_runs_the_tool_and_asks_again(live: &mut Live) -> anyhow::Result<()> {
    script_bash_runs(
        live,
        &[
            ("echo once > once.txt", "Done once."),
            ("echo again > again.txt", "Done again."),
        ],
    );
    let (agent, session) = asking_session(live).await?;

    let first = session
        .prompt_with(prompt_answering("Write once.txt", PermissionPolicy::Once))
        .await?;
    no_error(&first)?;
    single_permission(&first.interactions, "bash", PermissionReply::Once)?;
    let call = first
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in {:?}", first.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Completed,
        "bash ended {:?}",
        call.status
    );
    let once_txt = std::fs::read_to_string(agent.workspace().join("once.txt"))?;
    anyhow::ensure!(once_txt == "once\n", "once.txt holds {once_txt:?}");

    // `once` approves that call only: the next bash call asks again.
    let second = session
        .prompt_with(prompt_answering("Write again.txt", PermissionPolicy::Once))
        .await?;
    no_error(&second)?;
    single_permission(&second.interactions, "bash", PermissionReply::Once)?;
    anyhow::ensure!(
        agent.workspace().join("again.txt").is_file(),
        "again.txt was not written"
    );

    let pending = agent.client().permissions().await?;
    anyhow::ensure!(pending.is_empty(), "still pending: {pending:?}");
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 4, "{} model requests", requests.len());
    anyhow::ensure!(
        requests[1].follows_tool_result() && requests[3].follows_tool_result(),
        "the model must get each tool's result after the approval"
    );

    live.evidence().record_turn(&first);
    live.evidence().record_turn(&second);
    live.evidence()
        .record("files", json!({"once.txt": once_txt}));
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

// Shares a server when the run shares: an `always` reply approves for its own project only
// (each workspace is an OpenCode project of its own), proven by `isolation::cross_talk_*`.
#[live_agent_test(timeout = "150s")]
async fn ask_answered_always_is_not_asked_again(live: &mut Live) -> anyhow::Result<()> {
    script_bash_runs(
        live,
        &[
            ("echo one > one.txt", "Wrote one."),
            ("echo two > two.txt", "Wrote two."),
        ],
    );
    let (agent, session) = asking_session(live).await?;

    let first = session
        .prompt_with(prompt_answering("Write one.txt", PermissionPolicy::Always))
        .await?;
    no_error(&first)?;
    let asked = single_permission(&first.interactions, "bash", PermissionReply::Always)?;
    let Ask::Permission(request) = &asked.ask else {
        unreachable!("checked by single_permission")
    };
    let always = request.always.clone();
    anyhow::ensure!(
        always.iter().any(|p| p.starts_with("echo")),
        "an `always` reply would approve {always:?}, which does not cover the next echo"
    );
    anyhow::ensure!(
        agent.workspace().join("one.txt").is_file(),
        "one.txt was not written"
    );

    // The default policy leaves asks pending: were `always` forgotten, this turn would time out
    // naming the ask instead of completing.
    let second = session
        .prompt_with(Prompt::new("Write two.txt").with_ceiling(scaled(Duration::from_secs(60))))
        .await?;
    no_error(&second)?;
    anyhow::ensure!(
        second.interactions.is_empty(),
        "asked again after `always`: {:?}",
        second.interactions
    );
    let call = second
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in {:?}", second.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Completed,
        "bash ended {:?}",
        call.status
    );
    let two = std::fs::read_to_string(agent.workspace().join("two.txt"))?;
    anyhow::ensure!(two == "two\n", "two.txt holds {two:?}");
    anyhow::ensure!(
        live.model().requests().len() == 4,
        "{} model requests",
        live.model().requests().len()
    );

    live.evidence().record_turn(&first);
    live.evidence().record("always_patterns", &always);
    live.evidence().record_turn(&second);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn ask_rejected_fails_the_tool(live: &mut Live) -> anyhow::Result<()> {
    let (agent, session) = asking_session(live).await?;
    let file = agent.workspace().join("denied.txt");
    live.model().reply(Reply::tool_call(
        "write",
        json!({"filePath": file.display().to_string(), "content": "must not exist\n"}),
    ));
    let turn = session
        .prompt_with(prompt_answering(
            "Write denied.txt",
            PermissionPolicy::Reject,
        ))
        .await?;

    single_permission(&turn.interactions, "edit", PermissionReply::Reject)?;
    let call = turn
        .tool_call("write")
        .ok_or_else(|| anyhow::anyhow!("no write call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Error,
        "write ended {:?}",
        call.status
    );
    anyhow::ensure!(
        call.error.as_deref().is_some_and(|e| !e.is_empty()),
        "the failed write carries no error"
    );
    anyhow::ensure!(!file.exists(), "denied.txt was written despite the reject");
    // A reject ends the turn: the model is not asked again with the failed call.
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "{} model requests",
        live.model().requests().len()
    );
    let pending = agent.client().permissions().await?;
    anyhow::ensure!(pending.is_empty(), "still pending: {pending:?}");

    live.evidence().record_turn(&turn);
    live.evidence().record("tool_error", &call.error);
    live.evidence()
        .record("file_written", json!({"denied.txt": file.exists()}));
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "150s")]
async fn pending_ask_times_out_naming_the_permission(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::tool_call(
        "bash",
        json!({"command": "echo never > never.txt"}),
    ));
    let (agent, session) = asking_session(live).await?;
    // The turn's ceiling is the default's; the ask's own ceiling is what ends the turn, two
    // seconds after the ask arrived, however long the first prompt took to get there.
    let result = session
        .prompt_with(
            Prompt::new("Write never.txt").with_ask_ceiling(scaled(Duration::from_secs(2))),
        )
        .await;

    let Err(error) = result else {
        anyhow::bail!("the turn finished although its ask was left pending");
    };
    anyhow::ensure!(
        matches!(error, ClientError::AskUnanswered { .. }),
        "expected the ask ceiling to end the turn, got {error}"
    );
    let message = error.to_string();
    let names_ask = message.contains("permission") && message.contains("bash");
    anyhow::ensure!(names_ask, "the diagnostic does not name the ask: {message}");
    anyhow::ensure!(
        message.contains("unanswered"),
        "the diagnostic does not say the ask is unanswered: {message}"
    );
    let leaks_ids = ["per_", "ses_", "msg_", "prt_"]
        .iter()
        .any(|p| message.contains(p));
    anyhow::ensure!(!leaks_ids, "the diagnostic leaks ids: {message}");

    // Nothing answered it: it is still pending on the server, the command never ran, and the
    // model was not asked again.
    let pending = agent.client().permissions().await?;
    let pending_names: Vec<&str> = pending.iter().map(|p| p.permission.as_str()).collect();
    anyhow::ensure!(pending_names == ["bash"], "pending: {pending:?}");
    anyhow::ensure!(
        !agent.workspace().join("never.txt").exists(),
        "the command ran without approval"
    );
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "{} model requests",
        live.model().requests().len()
    );

    // The part naming the ask is stable (its id is redacted); the rest (event tail, the
    // server's listings) varies with timing.
    let ask_line: Vec<&str> = message
        .split("; ")
        .filter(|part| part.starts_with("permission "))
        .collect();
    live.progress(&message);
    live.evidence().record(
        "turn_error",
        json!({"kind": "AskUnanswered", "pending_ask": ask_line}),
    );
    live.evidence()
        .record("pending_permissions", &pending_names);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
