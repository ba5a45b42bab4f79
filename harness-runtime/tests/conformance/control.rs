//! Control: abort, fork, commands.

use harness_runtime::model::Reply;
use serde_json::json;

use crate::asks::{SUMMARY_EVENTS, permission_pending};
use crate::differences::Deliberate;
use crate::talk::Talk;

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// Real OpenCode's model says what the fixture's default turn says.
fn script_default_turn(talk: &Talk) {
    talk.model()
        .reply(Reply::text("Fixture completed.").in_deltas(2));
}

/// A titled session (an untitled one makes real OpenCode ask its model for a title) with one
/// finished turn: returns the session's id and the assistant message's id.
async fn session_with_a_turn(talk: &mut Talk) -> anyhow::Result<(String, String)> {
    let session = talk
        .post("/session", json!({"title": "control"}))
        .await?
        .str("/id")?;
    script_default_turn(talk);
    let prompt = json!({"parts": [{"type": "text", "text": "say you are done"}]});
    let answer = talk
        .post(&format!("/session/{session}/message"), prompt)
        .await?;
    Ok((session, answer.str("/info/id")?))
}

interaction!(
    /// `POST /session/{id}/abort` on an idle session: `true`, and nothing changes.
    abort_idle(talk) {
        let session = talk
            .post("/session", json!({"title": "control"}))
            .await?
            .str("/id")?;
        talk.post(&format!("/session/{session}/abort"), json!({})).await?;
        talk.get(&format!("/session/{session}/message")).await?;
        talk.get("/session/status").await?;
    }
);

interaction!(
    /// Abort of a turn that waits for a permission: `session.error` with `MessageAbortedError`,
    /// the session idle, the tool part interrupted; the request stays listed.
    abort_running(talk) {
        let (session, _) = permission_pending(talk).await?;
        talk.get("/session/status").await?;
        talk.post(&format!("/session/{session}/abort"), json!({})).await?;
        // The tool part's `running` update races the ask (see asks.rs).
        talk.events_until_except("session.error", &["message.part.updated"])
            .await?;
        talk.events_until_except("session.idle", SUMMARY_EVENTS).await?;
        talk.events_until_except("session.idle", SUMMARY_EVENTS).await?;
        talk.get(&format!("/session/{session}/message")).await?;
        talk.get("/session/status").await?;
        talk.get("/permission").await?;
    }
);

interaction!(
    /// `POST /session/{id}/fork` without a message: a new session with copies of every
    /// message.
    fork_whole(talk) {
        let (session, _) = session_with_a_turn(talk).await?;
        let fork = talk
            .post(&format!("/session/{session}/fork"), json!({}))
            .await?
            .str("/id")?;
        talk.get(&format!("/session/{fork}/message")).await?;
        talk.get(&format!("/session/{session}/message")).await?;
    }
);

interaction!(
    /// `POST /session/{id}/fork` with a `messageID`: the copies stop before that message.
    fork_before_message(talk) {
        let (session, assistant) = session_with_a_turn(talk).await?;
        let fork = talk
            .post(
                &format!("/session/{session}/fork"),
                json!({"messageID": assistant}),
            )
            .await?
            .str("/id")?;
        talk.get(&format!("/session/{fork}/message")).await?;
    }
);

interaction!(
    /// `GET /command`: the built-in commands.
    commands_listed(talk) {
        talk.get("/command").await?;
    }
);

interaction!(
    /// `POST /session/{id}/command` runs `init` as a prompt of its template: answered like a
    /// blocking prompt, with the assistant message.
    command_run(talk) {
        let session = talk
            .post("/session", json!({"title": "control"}))
            .await?
            .str("/id")?;
        script_default_turn(talk);
        let body = json!({"command": "init", "arguments": "keep it short"});
        // The user message (the template filled in) is not read back: on a shared real server
        // the work tree it names is that of whichever directory loaded the commands first.
        talk.post(&format!("/session/{session}/command"), body).await?;
    }
);
