//! Error answers: bad ids, bad bodies, unknown routes, as a client meets them.

use serde_json::json;

use crate::differences::Deliberate;
use crate::talk::Talk;

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

/// A session id in the right format that names no session.
const UNKNOWN_SESSION: &str = "ses_0000000000000000000000000000";

/// A text prompt's body.
fn prompt() -> serde_json::Value {
    json!({"parts": [{"type": "text", "text": "hello"}]})
}

/// A titled session (an untitled one makes real OpenCode ask its model for a title).
async fn session(talk: &mut Talk) -> anyhow::Result<String> {
    talk.post("/session", json!({"title": "errors"}))
        .await?
        .str("/id")
}

/// Every session route a client calls with an id, each with `id`.
async fn every_session_route(talk: &mut Talk, id: &str) -> anyhow::Result<()> {
    talk.get(&format!("/session/{id}")).await?;
    talk.patch(&format!("/session/{id}"), json!({"title": "t"}))
        .await?;
    talk.get(&format!("/session/{id}/message")).await?;
    talk.get(&format!("/session/{id}/children")).await?;
    talk.post(&format!("/session/{id}/message"), prompt())
        .await?;
    talk.post(&format!("/session/{id}/prompt_async"), prompt())
        .await?;
    talk.post(&format!("/session/{id}/abort"), json!({}))
        .await?;
    talk.delete(&format!("/session/{id}")).await?;
    Ok(())
}

interaction!(
    /// A well-formed `ses_…` id that names no session, on get, update, messages, children,
    /// both prompts, abort and delete.
    unknown_session_id(talk) {
        every_session_route(talk, UNKNOWN_SESSION).await?;
    }
);

interaction!(
    /// An id that is not a session id at all (no `ses` prefix), on the same routes.
    malformed_session_id(talk) {
        every_session_route(talk, "not-a-session").await?;
    }
);

interaction!(
    /// `POST /session` with a known field of the wrong type: `title`, `parentID` (not `ses…`),
    /// `permission` (not a list of rules, a rule with an unknown action), `model` without
    /// `providerID`, `metadata` not an object, `workspaceID` not `wrk…`.
    create_wrong_types(talk) {
        for body in [
            json!({"title": 5}),
            json!({"parentID": "x"}),
            json!({"parentID": 5}),
            json!({"permission": {"question": "deny"}}),
            json!({"permission": [{"permission": "q", "pattern": "*", "action": "nope"}]}),
            json!({"model": {"id": "m"}}),
            json!({"metadata": 5}),
            json!({"workspaceID": "x"}),
            json!({"agent": 5}),
            json!([]),
            json!("title"),
        ] {
            talk.post("/session", body).await?;
        }
        talk.get("/session").await?;
    }
);

interaction!(
    /// `POST /session` with fields the schema does not have (at the top, in `model`, in a
    /// rule).
    create_unknown_fields(talk) {
        talk.post("/session", json!({"title": "u", "bogus": 1})).await?;
        let model = json!({"id": "m", "providerID": "p", "extra": 1});
        talk.post("/session", json!({"title": "u", "model": model})).await?;
        let rule = json!({"permission": "question", "pattern": "*", "action": "deny", "x": 1});
        talk.post("/session", json!({"title": "u", "permission": [rule]})).await?;
    }
);

interaction!(
    /// `POST /session` with a parent that does not exist.
    create_unknown_parent(talk) {
        talk.post("/session", json!({"title": "orphan", "parentID": UNKNOWN_SESSION})).await?;
    }
);

interaction!(
    /// `PATCH /session/{id}` with wrong types and unknown fields.
    update_bad_bodies(talk) {
        let id = session(talk).await?;
        let path = format!("/session/{id}");
        for body in [
            json!({"title": 5}),
            json!({"time": {"archived": "yesterday"}}),
            json!({"time": {"created": 1}}),
            json!({"permission": "deny"}),
            json!({"metadata": []}),
            json!({"bogus": 1}),
            json!([]),
        ] {
            talk.patch(&path, body).await?;
        }
        talk.get(&path).await?;
    }
);

interaction!(
    /// A prompt without `parts`, with `parts` not a list, with a part of an unknown type or
    /// without its text, with a `model` lacking `providerID`, and with an unknown field (which
    /// is dropped: `noReply` keeps the model out of it), on the blocking and the async route.
    prompt_bad_bodies(talk) {
        let id = session(talk).await?;
        for route in ["message", "prompt_async"] {
            let path = format!("/session/{id}/{route}");
            for body in [
                json!({}),
                json!({"parts": "hello"}),
                json!({"parts": [{"type": "nope", "text": "x"}]}),
                json!({"parts": [{"type": "text"}]}),
                json!({"parts": [{"type": "text", "text": "x"}], "model": {"id": "m"}}),
                json!({"parts": [{"type": "text", "text": "x"}], "noReply": true, "bogus": 1}),
            ] {
                talk.post(&path, body).await?;
            }
        }
    }
);

interaction!(
    /// `POST /permission/{id}/reply` with a bad body and with a good one for a request that
    /// does not exist; the older `POST /session/{id}/permissions/{pid}` likewise.
    permission_reply_bad_bodies(talk) {
        let path = "/permission/per_0000000000000000000000000000/reply";
        for body in [
            json!({}),
            json!({"reply": "maybe"}),
            json!({"reply": 5}),
            json!({"reply": "once", "bogus": 1}),
            json!({"reply": "once"}),
        ] {
            talk.post(path, body).await?;
        }
        let id = session(talk).await?;
        let legacy = format!("/session/{id}/permissions/per_0000000000000000000000000000");
        for body in [json!({}), json!({"response": "maybe"}), json!({"response": "once"})] {
            talk.post(&legacy, body).await?;
        }
    }
);

interaction!(
    /// Routes OpenCode does not have.
    unknown_route(talk) {
        talk.get("/no-such-route").await?;
        talk.post("/session/no/such/route", json!({})).await?;
        talk.get("/session/ses_0000000000000000000000000000/nothing").await?;
    }
);

interaction!(
    /// A body that is not JSON (cut short) on create, update, prompt and permission reply; and
    /// an empty body, declared JSON.
    malformed_json(talk) {
        let id = session(talk).await?;
        let permission = "/permission/per_0000000000000000000000000000/reply";
        for (method, path) in [
            ("POST", "/session".to_owned()),
            ("PATCH", format!("/session/{id}")),
            ("POST", format!("/session/{id}/message")),
            ("POST", format!("/session/{id}/prompt_async")),
            ("POST", permission.to_owned()),
        ] {
            talk.call_raw(method, &path, "{\"title\": ").await?;
        }
        talk.call_raw("POST", "/session", "").await?;
        talk.call_raw("PATCH", &format!("/session/{id}"), "").await?;
        talk.get("/session").await?;
    }
);
