//! Cross-talk: scenarios that share servers (the default) see nothing of one another.
//!
//! Six scenarios do the same thing; the runner (2 threads) leases them the pool's servers one
//! scenario at a time, so most follow a neighbour on the same server. Each one, after every
//! neighbour that ran before it in this process:
//! - is asked for the same `bash` command every neighbour answered `always` (an approval does
//!   not cross projects), and answers `always` itself;
//! - lists only its own session, and a neighbour's session id answers 404;
//! - has an OpenCode project, a config (its own scripted model) and files of its own;
//! - receives only its own session's events, and no neighbour's pending permission or question.
//!
//! A neighbour that ran before it in the same workspace (a warm workspace the pool reset and
//! handed on: same config) shares its directory and OpenCode project id, which OpenCode keeps
//! for a directory; everything else above holds for it too, and the model the config names is
//! the seat's stable port, now forwarding to this scenario's model (its script answered).
//!
//! The `warm_leftovers_*` scenarios share another config: each finds its workspace as new (only
//! the project's `.git` as made and the harness's `.opencode`, no session, no todo, no pending
//! ask), then leaves files, a session with a todo list and, the third, a git branch and commit,
//! for whichever of them gets its workspace next.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use harness_runtime::client::{Ask, Event};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use serde_json::Value;

/// The one command every scenario runs: a neighbour's `always` would cover it.
const COMMAND: &str = "echo cross talk > mine.txt";

/// What a scenario leaves for the scenarios after it.
#[derive(Clone, Debug)]
struct Neighbour {
    port: u16,
    session: String,
    project: String,
    model_url: String,
    workspace: PathBuf,
}

static NEIGHBOURS: Mutex<Vec<Neighbour>> = Mutex::new(Vec::new());

fn neighbours() -> Vec<Neighbour> {
    NEIGHBOURS.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// `GET <path>` on the agent, scoped to its workspace as its client is, as JSON.
async fn get_json(agent: &Agent, path: &str) -> anyhow::Result<Value> {
    let url = format!("{}{path}", agent.endpoint());
    let response = reqwest::Client::new()
        .get(url)
        .query(&[("directory", agent.workspace())])
        .timeout(Duration::from_secs(30))
        .send()
        .await?
        .error_for_status()?;
    Ok(response.json().await?)
}

async fn cross_talk(live: &mut Live, me: usize) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call("bash", json!({"command": COMMAND})))
        .reply(Reply::text("Wrote mine."));
    let agent = live
        .opencode_with(AgentOptions::default().permission(json!({
            "*": "allow",
            "bash": "ask",
            "external_directory": "deny",
        })))
        .await?;
    let before = neighbours();
    let on_my_server = before.iter().filter(|n| n.port == agent.port()).count();
    let title = format!("cross talk {me}");
    let session = agent
        .create_session_with(&CreateSession::titled(title.clone()))
        .await?;
    let client = agent.client();
    // Subscribed (and `server.connected` seen) before the turn, like the turn's own stream.
    let mut events = client.subscribe().await?;

    let turn = session
        .prompt_with(
            Prompt::new("Write mine.txt")
                .asks(AskPolicy::leave_pending().permissions(PermissionPolicy::Always)),
        )
        .await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());
    // Asked, although {on_my_server} neighbours on this server answered `always` for it.
    let [asked] = turn.interactions.as_slice() else {
        anyhow::bail!(
            "expected one ask ({on_my_server} neighbours on this server answered `always` \
             to the same command), got {:?}",
            turn.interactions
        );
    };
    let Ask::Permission(request) = &asked.ask else {
        anyhow::bail!("expected a permission ask, got {:?}", asked.ask);
    };
    anyhow::ensure!(request.permission == "bash", "asked for {request:?}");
    anyhow::ensure!(
        asked.answer.is_some(),
        "the ask was not answered: {asked:?}"
    );

    let project = get_json(&agent, "/project/current").await?;
    let project_id = project["id"].as_str().unwrap_or_default().to_string();
    anyhow::ensure!(
        !project_id.is_empty() && project_id != "global",
        "the workspace is OpenCode project {project_id:?}, not one of its own"
    );
    let config = get_json(&agent, "/config").await?;
    let model_url = live.model().base_url();
    anyhow::ensure!(
        config.to_string().contains(&model_url),
        "the config does not name this scenario's model {model_url}"
    );
    // The turn's requests reached this scenario's model, whatever port the config names.
    anyhow::ensure!(
        live.model().requests().len() >= 2,
        "this scenario's model served {} requests of its turn",
        live.model().requests().len()
    );

    let listed = client.list_sessions().await?;
    anyhow::ensure!(
        listed.len() == 1 && listed[0].id == session.id(),
        "listed sessions {:?}",
        listed.iter().map(|s| &s.title).collect::<Vec<_>>()
    );
    anyhow::ensure!(
        client.permissions().await?.is_empty() && client.questions().await?.is_empty(),
        "pending asks that are not this scenario's"
    );
    let mut in_my_workspace = 0;
    for neighbour in &before {
        let lookup = client.get_session(&neighbour.session).await;
        anyhow::ensure!(
            matches!(&lookup, Err(e) if e.is_not_found()),
            "a neighbour's session answered {lookup:?}"
        );
        if neighbour.workspace == agent.workspace() {
            // A warm workspace handed on: the same directory, so the same project and the same
            // stable model port; asked again above, its files gone below.
            in_my_workspace += 1;
            anyhow::ensure!(
                neighbour.port == agent.port() && neighbour.project == project_id,
                "a neighbour in this workspace had another server or project"
            );
            continue;
        }
        anyhow::ensure!(
            neighbour.project != project_id,
            "a neighbour in another workspace has the same project"
        );
        anyhow::ensure!(
            neighbour.model_url != model_url && !config.to_string().contains(&neighbour.model_url),
            "the config names a neighbour's model"
        );
    }

    let mut files: Vec<String> = std::fs::read_dir(agent.workspace())?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    files.retain(|f| f != ".git" && f != ".opencode");
    files.sort();

    // Every event this subscription saw while the turn ran is of this scenario's session.
    let mut foreign = Vec::new();
    while let Ok(Ok(Some(event))) =
        tokio::time::timeout(Duration::from_millis(200), events.next_event()).await
    {
        if let Some(id) = event.session_id() {
            if id != session.id() {
                foreign.push(format!("{event:?}"));
            }
        }
        if matches!(event, Event::ServerHeartbeat) {
            break;
        }
    }
    anyhow::ensure!(
        foreign.is_empty(),
        "a neighbour's events arrived: {foreign:?}"
    );

    NEIGHBOURS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(Neighbour {
            port: agent.port(),
            session: session.id().to_string(),
            project: project_id,
            model_url,
            workspace: agent.workspace().to_path_buf(),
        });
    live.progress(format!(
        "checked against {} neighbours, {on_my_server} of them on this server, \
         {in_my_workspace} in this workspace",
        before.len()
    ));

    live.evidence().record_turn(&turn);
    live.evidence().record("always_patterns", &request.always);
    live.evidence().record("files", &files);
    live.evidence().record("title", &title);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_1(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 1).await
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_2(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 2).await
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_3(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 3).await
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_4(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 4).await
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_5(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 5).await
}

#[live_agent_test(timeout = "120s")]
async fn cross_talk_6(live: &mut Live) -> anyhow::Result<()> {
    cross_talk(live, 6).await
}

/// The permission policy of the `warm_leftovers_*` scenarios: theirs alone, so they reuse one
/// another's workspaces and no other scenario's.
fn leftovers_policy() -> Value {
    json!({"*": "allow", "external_directory": "deny", "doom_loop": "deny"})
}

/// What a `warm_leftovers_*` scenario left: its session (and so its todo list).
static LEFT_SESSIONS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Every entry beneath `dir`, relative, sorted.
fn tree(dir: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(at) = pending.pop() {
        for entry in std::fs::read_dir(&at)? {
            let entry = entry?;
            let path = entry.path();
            found.push(path.strip_prefix(dir)?.display().to_string());
            if entry.file_type()?.is_dir() {
                pending.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

async fn leftovers(live: &mut Live, me: usize) -> anyhow::Result<()> {
    let mut command =
        "mkdir -p src/deep && echo left > src/deep/left.txt && echo mine > mine.txt".to_string();
    if me == 3 {
        command.push_str(
            " && git checkout -q -b topic && git -c user.email=s@example.com -c user.name=s \
             commit -q --allow-empty -m left",
        );
    }
    live.model()
        .reply(Reply::tool_call(
            "todowrite",
            json!({"todos": [{"content": "leave a todo", "status": "pending", "priority": "high"}]}),
        ))
        .reply(Reply::tool_call("bash", json!({"command": command, "description": "Leave things"})))
        .reply(Reply::text("Left."));
    let agent = live
        .opencode_with(AgentOptions::default().permission(leftovers_policy()))
        .await?;
    let workspace = agent.workspace().to_path_buf();

    // As a new workspace is, whoever had it before. What the harness adds on a shared server
    // (its `.opencode`, `.git/info/exclude`) is left out: the record is the same on a server of
    // its own.
    let mut git = tree(&workspace.join(".git"))?;
    git.retain(|entry| !entry.starts_with("info"));
    let mut top: Vec<String> = std::fs::read_dir(&workspace)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    top.retain(|entry| entry != ".opencode");
    top.sort();
    let head = std::fs::read_to_string(workspace.join(".git/HEAD"))?;
    let client = agent.client();
    anyhow::ensure!(
        client.list_sessions().await?.is_empty(),
        "the workspace lists sessions before this scenario made one"
    );
    anyhow::ensure!(
        client.permissions().await?.is_empty() && client.questions().await?.is_empty(),
        "pending asks before this scenario asked anything"
    );
    let earlier = LEFT_SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for id in &earlier {
        let lookup = client.get_session(id).await;
        anyhow::ensure!(
            matches!(&lookup, Err(e) if e.is_not_found()),
            "an earlier scenario's session answered {lookup:?}"
        );
        let todo = get_json(&agent, &format!("/session/{id}/todo")).await;
        anyhow::ensure!(
            todo.as_ref()
                .map_or(true, |t| t.as_array().is_some_and(Vec::is_empty)),
            "an earlier scenario's todo list answered {todo:?}"
        );
    }

    let session = agent.create_session().await?;
    let turn = session.prompt("Leave things behind").await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());
    let todo = get_json(&agent, &format!("/session/{}/todo", session.id())).await?;
    anyhow::ensure!(
        todo.as_array().is_some_and(|t| t.len() == 1),
        "the todo list: {todo}"
    );
    anyhow::ensure!(
        workspace.join("src/deep/left.txt").is_file(),
        "nothing was left"
    );
    LEFT_SESSIONS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(session.id().to_string());

    live.evidence().record_turn(&turn);
    live.evidence().record("top", &top);
    live.evidence().record("git", &git);
    live.evidence().record("head", &head);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s")]
async fn warm_leftovers_1(live: &mut Live) -> anyhow::Result<()> {
    leftovers(live, 1).await
}

#[live_agent_test(timeout = "120s")]
async fn warm_leftovers_2(live: &mut Live) -> anyhow::Result<()> {
    leftovers(live, 2).await
}

#[live_agent_test(timeout = "120s")]
async fn warm_leftovers_3(live: &mut Live) -> anyhow::Result<()> {
    leftovers(live, 3).await
}
