//! Asks: permission ask / list / reply, question ask / reply / reject.

use serde_json::json;

use crate::differences::Deliberate;
use crate::talk::{NextTurn, Talk};

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// A session whose rules ask before `bash`, with a turn running that asks the permission:
/// returns the session's id and the request's id, once `permission.asked` came and
/// `GET /permission` listed it.
pub(crate) async fn permission_pending(talk: &mut Talk) -> anyhow::Result<(String, String)> {
    let rules = json!([{"permission": "bash", "pattern": "*", "action": "ask"}]);
    let session = talk
        .post("/session", json!({"title": "asks", "permission": rules}))
        .await?
        .str("/id")?;
    talk.next_turn(NextTurn::AskPermission)?;
    let prompt = json!({"parts": [{"type": "text", "text": "run echo fixture"}]});
    talk.post(&format!("/session/{session}/prompt_async"), prompt)
        .await?;
    talk.events_until("permission.asked").await?;
    let request = talk.get("/permission").await?.str("/0/id")?;
    Ok((session, request))
}

/// A session with a turn running that asks the question "Pick one": returns the session's id
/// and the request's id, once `question.asked` came and `GET /question` listed it.
async fn question_pending(talk: &mut Talk) -> anyhow::Result<(String, String)> {
    let session = talk
        .post("/session", json!({"title": "asks"}))
        .await?
        .str("/id")?;
    talk.next_turn(NextTurn::AskQuestion)?;
    let prompt = json!({"parts": [{"type": "text", "text": "ask me"}]});
    talk.post(&format!("/session/{session}/prompt_async"), prompt)
        .await?;
    talk.events_until("question.asked").await?;
    let request = talk.get("/question").await?.str("/0/id")?;
    Ok((session, request))
}

/// What real OpenCode sends while a step's summary is computed, racing the turn's own events.
pub(crate) const SUMMARY_EVENTS: &[&str] = &["session.updated", "session.diff"];

/// After the reply that sends `replied` (an event type): that event, the turn's events to its
/// end, the messages, and the lists now empty. The tool part's update to `running` races the
/// ask on real OpenCode (it comes before or after it), so part updates before `replied` are
/// left out.
async fn after_reply(talk: &mut Talk, session: &str, replied: &str) -> anyhow::Result<()> {
    talk.events_until_except(replied, &["message.part.updated"])
        .await?;
    talk.events_until_except("session.idle", SUMMARY_EVENTS)
        .await?;
    talk.get(&format!("/session/{session}/message")).await?;
    talk.get("/permission").await?;
    talk.get("/question").await?;
    Ok(())
}

/// Reply `reply` to the permission, then the turn's end.
async fn permission_replied(talk: &mut Talk, reply: &str) -> anyhow::Result<()> {
    let (session, request) = permission_pending(talk).await?;
    talk.post(
        &format!("/permission/{request}/reply"),
        json!({"reply": reply}),
    )
    .await?;
    after_reply(talk, &session, "permission.replied").await?;
    // A second reply finds the request gone.
    talk.post(
        &format!("/permission/{request}/reply"),
        json!({"reply": reply}),
    )
    .await?;
    Ok(())
}

interaction!(
    /// A permission asked during a turn, replied `once`: the tool runs, the turn completes.
    permission_once(talk) {
        permission_replied(talk, "once").await?;
    }
);

interaction!(
    /// A permission replied `always`: the tool runs, the turn completes.
    permission_always(talk) {
        permission_replied(talk, "always").await?;
    }
);

interaction!(
    /// A permission replied `reject`: the tool part ends in an error, the turn ends.
    permission_reject(talk) {
        permission_replied(talk, "reject").await?;
    }
);

interaction!(
    /// A question asked during a turn, answered `A`: the tool completes with the answer.
    question_reply(talk) {
        let (session, request) = question_pending(talk).await?;
        talk.post(&format!("/question/{request}/reply"), json!({"answers": [["A"]]}))
            .await?;
        after_reply(talk, &session, "question.replied").await?;
    }
);

interaction!(
    /// A question rejected: the tool part ends in an error, the turn ends.
    question_reject(talk) {
        let (session, request) = question_pending(talk).await?;
        talk.post(&format!("/question/{request}/reject"), json!({})).await?;
        after_reply(talk, &session, "question.rejected").await?;
    }
);
