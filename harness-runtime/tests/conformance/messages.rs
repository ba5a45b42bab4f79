//! Messages: a session's messages and their query parameters (`limit`, paging), one message by id.

use anyhow::Context;
use base64::Engine;
use serde_json::{Value, json};

use crate::differences::Deliberate;
use crate::prompts::{script_default_turn, titled_session};
use crate::talk::{Answer, Talk};

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

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

/// What a page says of the next one: its `Link` (host left out) and `x-next-cursor` headers,
/// the cursor shown decoded (base64 of `{id, time}`: the oldest message of the page), or
/// `null` without a next page. Records the cursor as `[cursor-n]` in later request paths.
fn next_page(talk: &mut Talk, answer: &Answer, n: usize) -> anyhow::Result<Option<String>> {
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let Some(cursor) = header("x-next-cursor") else {
        let link = header("link");
        talk.note("next page", json!({"link": link}));
        return Ok(None);
    };
    let placeholder = format!("[cursor-{n}]");
    let decoded = [
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        &base64::engine::general_purpose::STANDARD,
    ]
    .iter()
    .find_map(|engine| {
        engine
            .decode(cursor.trim_end_matches('='))
            .ok()
            .or_else(|| engine.decode(&cursor).ok())
    })
    .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
    .with_context(|| format!("the cursor {cursor:?} is not base64 of JSON"))?;
    // The link's host is the forwarder's, which varies per run; its path and query are shown,
    // without the `directory` the forwarder adds on a shared server only (the link repeats
    // the request's query).
    let link = header("link").map(|link| {
        let from = link.find("/session/").unwrap_or(0);
        let link = format!("<{}", &link[from..]).replace(&cursor, &placeholder);
        let Some((path, rest)) = link.split_once('?') else {
            return link;
        };
        let (query, tail) = rest.split_once('>').unwrap_or((rest, ""));
        let kept: Vec<&str> = query
            .split('&')
            .filter(|pair| !pair.starts_with("directory="))
            .collect();
        format!("{path}?{}>{tail}", kept.join("&"))
    });
    talk.note(
        "next page",
        json!({
            "link": link,
            "x-next-cursor": placeholder,
            "cursor": {"decoded": decoded, "padded": cursor.ends_with('=')},
            "expose": header("access-control-expose-headers"),
        }),
    );
    talk.conceal(&cursor, &placeholder);
    Ok(Some(cursor))
}

interaction!(
    /// `limit` with `before`: the newest page names the next (older) one in `Link` and
    /// `x-next-cursor`; following the cursors walks back to the first message, whose page
    /// names none.
    pages_with_before(talk) {
        let id = titled_session(talk).await?;
        turn(talk, &id, "first").await?;
        turn(talk, &id, "second").await?;
        turn(talk, &id, "third").await?;
        let mut path = format!("/session/{id}/message?limit=2");
        for n in 1..=4 {
            let answer = talk.get(&path).await?;
            let Some(cursor) = next_page(talk, &answer, n)? else {
                break;
            };
            path = format!("/session/{id}/message?limit=2&before={cursor}");
        }
    }
);
