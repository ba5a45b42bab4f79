//! Messages: a session's messages and their query parameters (`limit`, paging), one message by id.

use serde_json::json;

use crate::differences::Deliberate;
use crate::prompts::{script_default_turn, titled_session};
use crate::sessions::version_marked;
use crate::talk::Talk;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = version_marked! {
    "messages::after_a_turn" => ["/steps/0/answer/version"],
    "messages::limit" => ["/steps/0/answer/version"],
    "messages::one_by_id" => ["/steps/0/answer/version"],
};

/// One blocking turn of the default answer; returns the assistant message's id.
async fn turn(talk: &mut Talk, id: &str, text: &str) -> anyhow::Result<String> {
    script_default_turn(talk);
    let body = json!({"parts": [{"type": "text", "text": text}]});
    let answer = talk.post(&format!("/session/{id}/message"), body).await?;
    answer.str("/info/id")
}

interaction!(
    /// `GET /session/{id}/message` after one turn: the user message and the assistant's, oldest
    /// first, each with its parts.
    after_a_turn(talk) {
        let id = titled_session(talk).await?;
        turn(talk, &id, "say you are done").await?;
        talk.get(&format!("/session/{id}/message")).await?;
    }
);

interaction!(
    /// `limit` keeps the newest messages (`0`: all); a bad `limit`, and `before` without a
    /// limit or with a cursor that is not one, are refused.
    limit(talk) {
        let id = titled_session(talk).await?;
        turn(talk, &id, "first").await?;
        turn(talk, &id, "second").await?;
        for query in ["limit=1", "limit=3", "limit=0", "limit=10"] {
            talk.get(&format!("/session/{id}/message?{query}")).await?;
        }
        for query in ["limit=-1", "limit=1.5", "limit=abc", "before=abc", "limit=2&before=garbage!"] {
            talk.get(&format!("/session/{id}/message?{query}")).await?;
        }
    }
);

interaction!(
    /// `GET /session/{id}/message/{messageID}`: the user and the assistant message with their
    /// parts; an unknown message and an unknown session are 404.
    one_by_id(talk) {
        let id = titled_session(talk).await?;
        script_default_turn(talk);
        let body = json!({"parts": [{"type": "text", "text": "say you are done"}]});
        let answer = talk.post(&format!("/session/{id}/message"), body).await?;
        let assistant = answer.str("/info/id")?;
        let user = answer.str("/info/parentID")?;
        talk.get(&format!("/session/{id}/message/{user}")).await?;
        talk.get(&format!("/session/{id}/message/{assistant}")).await?;
        talk.get(&format!("/session/{id}/message/msg_0000000000000000000000000")).await?;
        talk.get(&format!("/session/ses_0000000000000000000000000/message/{user}")).await?;
    }
);
