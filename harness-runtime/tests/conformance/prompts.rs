//! Prompts: async (`prompt_async`) and blocking (`POST /session/{id}/message`), with the events until idle, scoped by directory.

use harness_runtime::model::Reply;
use serde_json::json;

use crate::differences::Deliberate;
use crate::talk::Talk;

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// The fixture's default turn answers "Fixture completed." in two deltas; real OpenCode's
/// model is scripted to say the same, so both turns carry the same parts.
pub(crate) fn script_default_turn(talk: &Talk) {
    talk.model()
        .reply(Reply::text("Fixture completed.").in_deltas(2));
}

/// A session with a title (an untitled one makes real OpenCode ask its model for a title).
pub(crate) async fn titled_session(talk: &mut Talk) -> anyhow::Result<String> {
    let created = talk
        .post("/session", json!({"title": "conformance"}))
        .await?;
    created.str("/id")
}

interaction!(
    /// `POST /session/{id}/message`: the answer is the assistant message and its parts, sent
    /// when the turn ends.
    blocking(talk) {
        let id = titled_session(talk).await?;
        script_default_turn(talk);
        let body = json!({"parts": [{"type": "text", "text": "say you are done"}]});
        talk.post(&format!("/session/{id}/message"), body).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// `POST /session/{id}/prompt_async` answers 204 at once; the turn's events follow on the
    /// workspace's stream, in order, until the session is idle.
    async_events_until_idle(talk) {
        let id = titled_session(talk).await?;
        script_default_turn(talk);
        let body = json!({"parts": [{"type": "text", "text": "say you are done"}]});
        talk.post(&format!("/session/{id}/prompt_async"), body).await?;
        talk.events_until("session.idle").await?;
    }
);

interaction!(
    /// Events are scoped by directory: the talk's stream names the workspace, so a turn of a
    /// session in another directory (`elsewhere` below the workspace: another directory, with
    /// an instance of its own) sends nothing to it; only the workspace's session is heard of.
    events_scoped_by_directory(talk) {
        let here = talk.post("/session", json!({"title": "here"})).await?;
        // It must exist: real OpenCode answers a 500 to a prompt in a directory that does not.
        let elsewhere = format!("{}/elsewhere", here.str("/directory")?);
        std::fs::create_dir_all(&elsewhere)?;
        let directory = crate::sessions::url_encode(&elsewhere);
        let here = here.str("/id")?;
        let body = json!({"parts": [{"type": "text", "text": "say you are done"}]});
        let elsewhere = talk
            .post(&format!("/session?directory={directory}"), json!({"title": "elsewhere"}))
            .await?
            .str("/id")?;
        // Blocking: its turn has ended, and sent all it sends, before ours starts.
        script_default_turn(talk);
        talk.post(&format!("/session/{elsewhere}/message?directory={directory}"), body.clone())
            .await?;
        script_default_turn(talk);
        talk.post(&format!("/session/{here}/prompt_async"), body).await?;
        talk.sessions_of_events_until("session.idle").await?;
    }
);

interaction!(
    /// `noReply: true` stores the user message without a turn: the answer is that message.
    no_reply(talk) {
        let id = titled_session(talk).await?;
        let body = json!({"noReply": true, "parts": [{"type": "text", "text": "just note this"}]});
        talk.post(&format!("/session/{id}/message"), body).await?;
        talk.get(&format!("/session/{id}/message")).await?;
    }
);

interaction!(
    /// The body fields a client sends besides `parts`: `messageID`, `model`, `agent`,
    /// `system`, `tools`, `variant`; the user message records them, the session its runner and
    /// a permission rule per tool turned off.
    body_fields(talk) {
        let id = titled_session(talk).await?;
        script_default_turn(talk);
        // The scripted model as the agents' config names it (real OpenCode needs a model it
        // knows; the fixture runs on whatever a prompt names).
        let model = json!({"providerID": "scripted", "modelID": talk.model().model_name()});
        let body = json!({
            "messageID": "msg_conformance0000000000001",
            "model": model,
            "agent": "plan",
            "system": "Answer briefly.",
            "tools": {"bash": false},
            "variant": "default",
            "parts": [{"type": "text", "text": "say you are done"}],
        });
        let answer = talk.post(&format!("/session/{id}/message"), body).await?;
        let message = answer.str("/info/parentID")?;
        talk.get(&format!("/session/{id}/message/{message}")).await?;
        talk.get(&format!("/session/{id}")).await?;
    }
);

interaction!(
    /// A second prompt after the first turn ended: the second turn's events until idle again
    /// (the instance's start-up events come with the first turn only).
    second_turn(talk) {
        let id = titled_session(talk).await?;
        script_default_turn(talk);
        let body = json!({"parts": [{"type": "text", "text": "say you are done"}]});
        talk.post(&format!("/session/{id}/prompt_async"), body.clone()).await?;
        talk.events_until("session.idle").await?;
        script_default_turn(talk);
        talk.post(&format!("/session/{id}/prompt_async"), body).await?;
        // Real OpenCode summarizes the first turn's changes on its own after it ended, racing
        // the second prompt: its `session.updated` / `session.diff` are left out.
        talk.events_until_except("session.idle", &["session.updated", "session.diff"])
            .await?;
    }
);
