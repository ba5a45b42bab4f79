//! The routes real clients call beyond sessions and turns: each answers in the shape of OpenCode
//! 1.18.33's OpenAPI document (required fields and types checked here), and a route out of scope
//! answers a JSON error that says so.

mod fixture_common;

use fixture_common::*;
use serde_json::{Value, json};

/// The answer of `GET path`, which must be 200.
async fn ok(agent: &Agent, path: &str) -> Value {
    let (status, body) = get(&agent.url(path)).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

fn has(value: &Value, keys: &[&str]) {
    for key in keys {
        assert!(value.get(key).is_some(), "missing `{key}` in {value}");
    }
}

/// A session with one finished turn; returns its id.
async fn session_with_turn(agent: &Agent) -> String {
    let id = new_session(agent).await;
    let (status, reply) = post(
        &agent.url(&format!("/session/{id}/message")),
        text_prompt("hi"),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_config() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    assert!(ok(&agent, "/config").await.is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_config_providers() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/config/providers").await;
    assert!(
        body["providers"].is_array() && body["default"].is_object(),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_provider() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/provider").await;
    assert!(
        body["all"].is_array() && body["default"].is_object(),
        "{body}"
    );
    assert!(body["connected"].is_array(), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_agent() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/agent").await;
    let agents = body.as_array().expect("an array");
    assert!(
        agents
            .iter()
            .any(|a| a["name"] == "build" && a["mode"] == "primary"),
        "{body}"
    );
    assert!(
        agents
            .iter()
            .any(|a| a["name"] == "general" && a["mode"] == "subagent"),
        "{body}"
    );
    for a in agents {
        has(a, &["name", "mode", "permission", "options"]);
        assert!(["subagent", "primary", "all"].contains(&a["mode"].as_str().unwrap()));
        assert!(a["permission"].is_array() && a["options"].is_object());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_path() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/path?directory=%2Ftmp%2Fws").await;
    for key in ["home", "state", "config", "worktree", "directory"] {
        assert!(body[key].is_string(), "`{key}` in {body}");
    }
    assert_eq!(body["directory"], "/tmp/ws");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_project_current() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/project/current").await;
    has(&body, &["id", "worktree", "time", "sandboxes"]);
    assert!(body["time"]["created"].is_u64() && body["time"]["updated"].is_u64());
    assert!(body["sandboxes"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_command() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    assert!(ok(&agent, "/command").await.is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_vcs() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let body = ok(&agent, "/vcs").await;
    assert!(body.is_object(), "{body}");
    // Outside a repository the real server answers both as `null`.
    assert_eq!(body, json!({"branch": null, "default_branch": null}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_session_message_by_id() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let id = session_with_turn(&agent).await;
    let messages = ok(&agent, &format!("/session/{id}/message")).await;
    let mid = messages[1]["info"]["id"].as_str().unwrap();
    let one = ok(&agent, &format!("/session/{id}/message/{mid}")).await;
    assert_eq!(one, messages[1]);
    let (status, body) = get(&agent.url(&format!("/session/{id}/message/msg_none"))).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["name"], "NotFoundError");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_session_fork_and_children() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let id = session_with_turn(&agent).await;
    let (status, fork) = post(&agent.url(&format!("/session/{id}/fork")), json!({})).await;
    assert_eq!(status, 200, "{fork}");
    has(
        &fork,
        &[
            "id",
            "slug",
            "projectID",
            "directory",
            "title",
            "version",
            "time",
        ],
    );
    let fid = fork["id"].as_str().unwrap();
    assert_ne!(fid, id);
    assert_eq!(fork["title"], "t (fork #1)");
    let copied = ok(&agent, &format!("/session/{fid}/message")).await;
    assert_eq!(copied.as_array().unwrap().len(), 2);
    assert!(
        copied
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["info"]["sessionID"] == fid)
    );
    // Forked at the assistant message: only the user message comes along.
    let original = ok(&agent, &format!("/session/{id}/message")).await;
    let at = original[1]["info"]["id"].clone();
    let (_, partial) = post(
        &agent.url(&format!("/session/{id}/fork")),
        json!({"messageID": at}),
    )
    .await;
    let pid = partial["id"].as_str().unwrap();
    let some = ok(&agent, &format!("/session/{pid}/message")).await;
    assert_eq!(some.as_array().unwrap().len(), 1);

    let (status, child) = post(
        &agent.url("/session"),
        json!({"title": "c", "parentID": id}),
    )
    .await;
    assert_eq!(status, 200, "{child}");
    let children = ok(&agent, &format!("/session/{id}/children")).await;
    let ids: Vec<&Value> = children
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["id"])
        .collect();
    assert_eq!(ids, vec![&child["id"]]);
    let (status, _) = post(&agent.url("/session/ses_none/fork"), json!({})).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_session_todo_and_diff() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let id = session_with_turn(&agent).await;
    for route in ["todo", "diff"] {
        assert_eq!(
            ok(&agent, &format!("/session/{id}/{route}")).await,
            json!([])
        );
        let (status, _) = get(&agent.url(&format!("/session/ses_none/{route}"))).await;
        assert_eq!(status, 404, "{route} of an unknown session");
    }
}

/// `GET /global/event`: `GlobalEvent` frames `{directory, payload: {id, type, properties}}`,
/// every directory's events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_global_event() {
    use futures::StreamExt;
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let response = reqwest::Client::new()
        .get(agent.url("/global/event"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let (status, _) = call(
        reqwest::Method::POST,
        &agent.url("/session?directory=%2Ftmp%2Fglobal-a"),
        Some(json!({"title": "g"})),
    )
    .await;
    assert_eq!(status, 200);
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + ceiling(10.0);
    while !text.contains("session.created") {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .expect("session.created on the global stream in time")
            .expect("the stream stays open")
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    let frames: Vec<Value> = text
        .split("\n\n")
        .filter_map(|f| f.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    // The stream's own `server.connected` comes first, without a directory (as on the real
    // server); the events of sessions carry theirs.
    assert_eq!(frames[0], json!({"payload": frames[0]["payload"]}));
    assert_eq!(frames[0]["payload"]["type"], "server.connected");
    for frame in &frames {
        assert!(
            frame.get("directory").is_none_or(Value::is_string),
            "{frame}"
        );
        let payload = &frame["payload"];
        assert!(
            payload["id"].as_str().unwrap().starts_with("evt_"),
            "{frame}"
        );
        assert!(payload["type"].is_string() && payload["properties"].is_object());
    }
    let created = frames
        .iter()
        .find(|f| f["payload"]["type"] == "session.created")
        .unwrap();
    assert_eq!(created["directory"], "/tmp/global-a");
}

/// A route the fixture does not serve (PTYs: no client it is tested with needs them) says so in
/// a JSON error naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_route_out_of_scope_says_so() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let (status, body) = get(&agent.url("/pty")).await;
    assert_eq!(status, 404);
    let message = body["data"]["message"]
        .as_str()
        .expect("a JSON error message");
    assert!(
        message.contains("GET /pty") && message.contains("out of its scope"),
        "{message}"
    );
}
