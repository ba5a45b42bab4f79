//! Sessions: create with each body field, list with its filters and cursors, get, update,
//! delete, children, statuses.

use std::time::Duration;

use serde_json::json;

use crate::differences::Deliberate;
use crate::talk::{Answer, Talk};

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// Creates a session from `body` and returns its id.
async fn create(talk: &mut Talk, body: serde_json::Value) -> anyhow::Result<String> {
    talk.post("/session", body).await?.str("/id")
}

/// Lets the clock pass a millisecond, so the next session is stamped later than the last: a
/// list ordered by update time then has one order on both targets.
async fn tick() {
    tokio::time::sleep(Duration::from_millis(5)).await;
}

/// Three sessions of the workspace, oldest first: `Alpha one`, its child `child of one`, and
/// `Beta`. Returns the created answers.
async fn three_sessions(talk: &mut Talk) -> anyhow::Result<[Answer; 3]> {
    let alpha = talk.post("/session", json!({"title": "Alpha one"})).await?;
    tick().await;
    let parent = alpha.str("/id")?;
    let child = talk
        .post(
            "/session",
            json!({"title": "child of one", "parentID": parent}),
        )
        .await?;
    tick().await;
    let beta = talk.post("/session", json!({"title": "Beta"})).await?;
    Ok([alpha, child, beta])
}

interaction!(
    /// `POST /session` with a title, then `GET /session/{id}`.
    create_titled(talk) {
        let created = talk.post("/session", json!({"title": "conformance"})).await?;
        let id = created.str("/id")?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `POST /session` with no body fields: the default title is `New session - <ISO time>`.
    create_empty_body(talk) {
        let id = create(talk, json!({})).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `parentID`: the child names its parent and its default title is `Child session - …`;
    /// a titled child keeps its title.
    create_with_parent(talk) {
        let parent = create(talk, json!({"title": "parent"})).await?;
        talk.post("/session", json!({"parentID": parent})).await?;
        tick().await;
        talk.post("/session", json!({"parentID": parent, "title": "titled child"})).await?;
    }
);

interaction!(
    /// `permission`: the session's rules, echoed in order.
    create_with_permission(talk) {
        let rules = json!([
            {"permission": "question", "pattern": "*", "action": "deny"},
            {"permission": "bash", "pattern": "git *", "action": "allow"},
            {"permission": "edit", "pattern": "*", "action": "ask"},
        ]);
        let id = create(talk, json!({"title": "ruled", "permission": rules})).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `agent` and `model` (with and without `variant`): what the session echoes.
    create_with_agent_and_model(talk) {
        let model = json!({"id": "gemma3:270m", "providerID": "ollama", "variant": "high"});
        talk.post("/session", json!({"title": "m", "agent": "plan", "model": model})).await?;
        let model = json!({"id": "gemma3:270m", "providerID": "ollama"});
        talk.post("/session", json!({"title": "m", "model": model})).await?;
    }
);

interaction!(
    /// `metadata`: whether the session keeps it.
    create_with_metadata(talk) {
        let body = json!({"title": "meta", "metadata": {"ticket": "T-1", "n": 2}});
        let id = create(talk, body).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `workspaceID`: a `wrk…` id that names no workspace.
    create_with_workspace_id(talk) {
        talk.post("/session", json!({"title": "w", "workspaceID": "wrk_conformance"})).await?;
        talk.get("/session").await?;
    }
);

interaction!(
    /// `GET /session`: the workspace's sessions, most recently updated first; `roots` keeps
    /// those without a parent.
    list_roots(talk) {
        three_sessions(talk).await?;
        talk.get("/session").await?;
        talk.get("/session?roots=true").await?;
        talk.get("/session?roots=false").await?;
    }
);

interaction!(
    /// `search` (any case, in titles) and `limit` (the first n; 0 none; negative all).
    list_search_and_limit(talk) {
        three_sessions(talk).await?;
        talk.get("/session?search=ONE").await?;
        talk.get("/session?search=nothing-like-it").await?;
        talk.get("/session?limit=2").await?;
        talk.get("/session?limit=0").await?;
        talk.get("/session?limit=-1").await?;
        talk.get("/session?search=one&limit=1").await?;
    }
);

interaction!(
    /// `start`: sessions updated at or after it (ms), the cursor to what changed since.
    list_start(talk) {
        let [_, child, _] = three_sessions(talk).await?;
        talk.get("/session?start=0").await?;
        talk.get("/session?start=99999999999999").await?;
        let since = child.json["time"]["updated"].as_u64().unwrap_or_default();
        let answer = talk.get(&format!("/session?start={since}")).await?;
        let titles: Vec<_> = answer.json.as_array().into_iter().flatten()
            .map(|s| s["title"].clone()).collect();
        talk.note("titles since the child", json!(titles));
    }
);

interaction!(
    /// `directory`, `path`, `scope` and `workspace`: the list's other filters.
    list_directory_path_scope_workspace(talk) {
        let alpha = talk.post("/session", json!({"title": "Alpha"})).await?;
        let workspace = alpha.str("/directory")?;
        let encoded: String = url_encode(&workspace);
        talk.get(&format!("/session?directory={encoded}")).await?;
        talk.get(&format!("/session?directory={encoded}%2F")).await?;
        talk.get("/session?path=").await?;
        talk.get("/session?path=sub").await?;
        talk.get("/session?scope=project").await?;
        talk.get("/session?workspace=wrk_conformance").await?;
    }
);

interaction!(
    /// `GET /session/{id}` after a `PATCH` of the title: both answer the new title.
    update_title(talk) {
        let id = create(talk, json!({"title": "before"})).await?;
        talk.patch(&format!("/session/{id}"), json!({"title": "after"})).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `time.archived` set by `PATCH`: the session keeps it and stays listed.
    update_archived(talk) {
        let id = create(talk, json!({"title": "to archive"})).await?;
        let body = json!({"time": {"archived": 1_700_000_000_000_u64}});
        talk.patch(&format!("/session/{id}"), body).await?;
        talk.get(&format!("/session/{id}")).await?;
        talk.get("/session").await?;
    }
);

interaction!(
    /// `permission` and `metadata` by `PATCH`; an empty body changes nothing.
    update_permission_and_metadata(talk) {
        let rules = json!([{"permission": "question", "pattern": "*", "action": "deny"}]);
        let id = create(talk, json!({"title": "p", "permission": rules})).await?;
        let more = json!([{"permission": "bash", "pattern": "*", "action": "allow"}]);
        talk.patch(&format!("/session/{id}"), json!({"permission": more})).await?;
        talk.patch(&format!("/session/{id}"), json!({"metadata": {"k": "v"}})).await?;
        talk.patch(&format!("/session/{id}"), json!({})).await?;
    }
);

interaction!(
    /// `DELETE /session/{id}` answers `true`; then the session is gone from get, list and a
    /// second delete.
    delete_then_get(talk) {
        let id = create(talk, json!({"title": "doomed"})).await?;
        talk.delete(&format!("/session/{id}")).await?;
        talk.get(&format!("/session/{id}")).await?;
        talk.get("/session").await?;
        talk.delete(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// Deleting a parent: what becomes of its child.
    delete_parent(talk) {
        let parent = create(talk, json!({"title": "parent"})).await?;
        let child = create(talk, json!({"title": "child", "parentID": parent})).await?;
        talk.delete(&format!("/session/{parent}")).await?;
        talk.get(&format!("/session/{child}")).await?;
        talk.get("/session").await?;
    }
);

interaction!(
    /// `GET /session/{id}/children`: a parent's children, oldest first; none for a leaf.
    children(talk) {
        let parent = create(talk, json!({"title": "parent"})).await?;
        create(talk, json!({"title": "first child", "parentID": parent})).await?;
        tick().await;
        let second = create(talk, json!({"title": "second child", "parentID": parent})).await?;
        talk.get(&format!("/session/{parent}/children")).await?;
        talk.get(&format!("/session/{second}/children")).await?;
    }
);

interaction!(
    /// `GET /session/status` with every session idle: `{}`.
    status_idle(talk) {
        talk.get("/session/status").await?;
        create(talk, json!({"title": "idle"})).await?;
        talk.get("/session/status").await?;
    }
);

/// `text` percent-encoded for a query value (everything but unreserved characters).
pub(crate) fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

interaction!(
    /// The events of a session's life: created, updated by a `PATCH`, deleted.
    events_of_create_update_delete(talk) {
        let id = create(talk, json!({"title": "watched"})).await?;
        talk.events_until("session.created").await?;
        talk.patch(&format!("/session/{id}"), json!({"title": "renamed"})).await?;
        talk.events_until("session.updated").await?;
        talk.delete(&format!("/session/{id}")).await?;
        talk.events_until("session.deleted").await?;
    }
);

interaction!(
    /// A session in a subdirectory of the workspace: its `path` is relative to the project's
    /// work tree, and the list's `path` finds it.
    create_in_subdirectory(talk) {
        let root = talk.post("/session", json!({"title": "at the root"})).await?;
        let sub = url_encode(&format!("{}/sub/dir", root.str("/directory")?));
        tick().await;
        talk.post(&format!("/session?directory={sub}"), json!({"title": "below"})).await?;
        talk.get(&format!("/session?directory={sub}")).await?;
        talk.get(&format!("/session?directory={sub}&scope=project")).await?;
        talk.get(&format!("/session?directory={sub}&scope=project&path=sub")).await?;
        talk.get(&format!("/session?directory={sub}&scope=project&path=sub/dir")).await?;
        talk.get(&format!("/session?directory={sub}&scope=project&path=su")).await?;
    }
);
