//! Redacting a streamed response as the text it forms. A model streams its text and a tool
//! call's arguments in small deltas, so a workspace path or a secret is often split over two
//! chunks, where no chunk alone shows it. Each streamed text field is redacted whole, then cut
//! back at the chunk boundaries; a placeholder that straddles a boundary goes whole to the chunk
//! where its text began, so every chunk can be restored on its own at replay.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::apis::stream_of;
use super::format::WireApi;
use super::scrub::redact_leaf;
use crate::redact::Redactor;

/// One string of a chunk, in traversal order.
struct Leaf {
    /// The object key it is the value of.
    key: Option<String>,
    /// The streamed text it belongs to, when it is a delta (`choices/#0/delta/content`; each
    /// API names its own, [`stream_of`]).
    stream: Option<String>,
    text: String,
}

/// `chunks` (the payloads of one response on `api`, in order) redacted: streamed text fields as
/// the whole they form (each with its own numbering), every other string on its own with `ids`
/// (one numbering for the cassette, so tool-call ids stay distinct).
pub(crate) fn redact_stream(api: WireApi, ids: &Redactor, chunks: &[Value]) -> Vec<Value> {
    let leaves: Vec<Vec<Leaf>> = chunks
        .iter()
        .map(|chunk| {
            let mut found = Vec::new();
            let streamed = |path: &[String]| stream_of(api, chunk, path);
            collect(chunk, &mut Vec::new(), None, &streamed, &mut found);
            found
        })
        .collect();
    let mut redacted: Vec<Vec<String>> = leaves
        .iter()
        .map(|leaves| {
            leaves
                .iter()
                .map(|leaf| match leaf.stream {
                    Some(_) => String::new(),
                    None => redact_leaf(ids, leaf.key.as_deref(), &leaf.text),
                })
                .collect()
        })
        .collect();
    let mut streams: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (c, chunk) in leaves.iter().enumerate() {
        for (l, leaf) in chunk.iter().enumerate() {
            if let Some(stream) = &leaf.stream {
                streams.entry(stream).or_default().push((c, l));
            }
        }
    }
    for places in streams.values() {
        let pieces: Vec<&str> = places
            .iter()
            .map(|&(c, l)| leaves[c][l].text.as_str())
            .collect();
        for (&(c, l), piece) in places.iter().zip(split_redacted(ids, &pieces)) {
            redacted[c][l] = piece;
        }
    }
    chunks
        .iter()
        .zip(redacted)
        .map(|(chunk, texts)| rebuild(chunk, &mut texts.into_iter(), ids))
        .collect()
}

/// The strings of `value` in traversal order. Array items with an `index` field are named by it
/// (OpenAI's tool-call deltas), so each call's arguments form their own text.
fn collect(
    value: &Value,
    path: &mut Vec<String>,
    key: Option<&str>,
    streamed: &dyn Fn(&[String]) -> Option<String>,
    out: &mut Vec<Leaf>,
) {
    match value {
        Value::String(text) => out.push(Leaf {
            key: key.map(str::to_owned),
            stream: streamed(path),
            text: text.clone(),
        }),
        Value::Array(items) => {
            for (position, item) in items.iter().enumerate() {
                let segment = match item.get("index").and_then(Value::as_u64) {
                    Some(index) => format!("#{index}"),
                    None => format!("[{position}]"),
                };
                path.push(segment);
                collect(item, path, None, streamed, out);
                path.pop();
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                path.push(k.clone());
                collect(v, path, Some(k), streamed, out);
                path.pop();
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `value` with its strings replaced, in [`collect`]'s order, and its keys redacted.
fn rebuild(value: &Value, texts: &mut impl Iterator<Item = String>, ids: &Redactor) -> Value {
    match value {
        Value::String(_) => Value::String(texts.next().expect("one text per string")),
        Value::Array(items) => Value::Array(items.iter().map(|v| rebuild(v, texts, ids)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (ids.redact(k), rebuild(v, texts, ids)))
                .collect::<Map<String, Value>>(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// `pieces` redacted as the text they form, cut back into as many pieces. A cut falls where the
/// redacted prefix is a prefix of the redacted whole; inside a redacted span, the cut moves to
/// the span's end (the next pieces it covers come out empty).
fn split_redacted(base: &Redactor, pieces: &[&str]) -> Vec<String> {
    let whole: String = pieces.concat();
    let redact = |text: &str| base.with_fresh_numbering().redact(text);
    let redacted = redact(&whole);
    if redacted == whole {
        return pieces.iter().map(|p| (*p).to_owned()).collect();
    }
    let mut out = Vec::with_capacity(pieces.len());
    let (mut raw_cut, mut cut, mut boundary) = (0, 0, 0);
    for piece in pieces {
        boundary += piece.len();
        if boundary <= raw_cut {
            out.push(String::new());
            continue;
        }
        let mut end = boundary;
        let next = loop {
            if end >= whole.len() {
                end = whole.len();
                break redacted.len();
            }
            if whole.is_char_boundary(end) {
                let prefix = redact(&whole[..end]);
                if prefix.len() >= cut && redacted.starts_with(&prefix) {
                    break prefix.len();
                }
            }
            end += 1;
        };
        out.push(redacted[cut..next].to_owned());
        (raw_cut, cut) = (end, next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn redactor() -> Redactor {
        let redactor = Redactor::default();
        redactor.add_path(Path::new("/tmp/rec-root/workspace"), "[workspace]");
        redactor.add_secret("sk-canary-0123");
        redactor
    }

    #[test]
    fn a_path_and_a_secret_split_over_deltas_are_redacted_whole() {
        let pieces = [
            "read /tmp/rec-",
            "root/work",
            "space/a.txt with sk-ca",
            "nary-0123",
            "!",
        ];
        let out = split_redacted(&redactor(), &pieces);
        assert_eq!(
            out,
            ["read [workspace]", "", "/a.txt with [secret]", "", "!"]
        );
        assert_eq!(out.concat(), redactor().redact(&pieces.concat()));
    }

    #[test]
    fn untouched_text_keeps_its_pieces() {
        let pieces = ["Hel", "lo", " world"];
        assert_eq!(split_redacted(&redactor(), &pieces), pieces);
    }

    #[test]
    fn each_stream_is_redacted_whole_and_other_strings_on_their_own() {
        let delta = |content: &str, call: Option<(u64, &str)>| {
            let mut delta = json!({"content": content});
            if let Some((index, args)) = call {
                let id = format!("call_{index}00abcdef");
                delta["tool_calls"] =
                    json!([{"index": index, "id": id, "function": {"arguments": args}}]);
            }
            json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta}]})
        };
        let chunks = [
            delta("see /tmp/rec-root/wo", None),
            delta("rkspace", Some((0, "{\"path\":\"/tmp/rec-"))),
            delta("", Some((1, "{\"x\":\"sk-canary-"))),
            delta("", Some((0, "root/workspace/b\"}"))),
            delta("", Some((1, "0123\"}"))),
            json!({"model": "m", "created_at": "2025-01-01T00:00:00Z",
                   "message": {"content": "call_abc123"}}),
        ];
        let out = redact_stream(WireApi::OpenAi, &redactor(), &chunks);
        let text = |i: usize| out[i]["choices"][0]["delta"]["content"].clone();
        assert_eq!((text(0), text(1)), (json!("see [workspace]"), json!("")));
        let args = |i: usize| {
            out[i]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].clone()
        };
        assert_eq!(args(1), json!("{\"path\":\"[workspace]"));
        assert_eq!(args(3), json!("/b\"}"));
        assert_eq!(args(2), json!("{\"x\":\"[secret]"));
        assert_eq!(args(4), json!("\"}"));
        assert_eq!(out[0]["id"], "chatcmpl-1");
        // Ids are not streamed text: one numbering for the whole response.
        let id = |i: usize| out[i]["choices"][0]["delta"]["tool_calls"][0]["id"].clone();
        assert_eq!(
            (id(1), id(2), id(3)),
            (json!("[call-1]"), json!("[call-2]"), json!("[call-1]"))
        );
        assert_eq!(
            out[5],
            json!({"model": "m", "created_at": "2025-01-01T00:00:00Z",
                   "message": {"content": "[call-1]"}})
        );
    }
}
