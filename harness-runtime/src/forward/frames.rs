//! The `type` an event stream's frame carries (frames are cut by `crate::sse::Splitter`).

use std::borrow::Cow;

/// The event type of a frame: the `type` of the JSON in its `data` (or of its `payload`, as the
/// global stream wraps events). `None` for a frame without JSON data (a comment, a keep-alive).
pub(crate) fn event_type(frame: &[u8]) -> Option<Cow<'_, str>> {
    let mut data: Option<Cow<'_, [u8]>> = None;
    for line in frame
        .split(|&b| b == b'\n' || b == b'\r')
        .filter(|l| !l.is_empty())
    {
        let Some(value) = line.strip_prefix(b"data:") else {
            continue;
        };
        let value = value.strip_prefix(b" ").unwrap_or(value);
        data = Some(match data {
            None => Cow::Borrowed(value),
            // Several data lines are one value joined by LF (rare: OpenCode writes one line).
            Some(previous) => {
                let mut joined = previous.into_owned();
                joined.push(b'\n');
                joined.extend_from_slice(value);
                Cow::Owned(joined)
            }
        });
    }
    match data? {
        Cow::Borrowed(json) => type_of(json),
        Cow::Owned(json) => type_of(&json).map(|t| Cow::Owned(t.into_owned())),
    }
}

#[derive(serde::Deserialize)]
struct Typed<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow)]
    payload: Option<Payload<'a>>,
}

#[derive(serde::Deserialize)]
struct Payload<'a> {
    #[serde(borrow, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// The top-level `type` of `json`, else its `payload.type`. Other fields are skipped unparsed.
fn type_of(json: &[u8]) -> Option<Cow<'_, str>> {
    let typed: Typed<'_> = serde_json::from_slice(json).ok()?;
    typed.kind.or(typed.payload.and_then(|p| p.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_type_is_read_from_the_data_or_its_payload() {
        let t = |frame: &[u8]| event_type(frame).map(Cow::into_owned);
        assert_eq!(
            t(b"data: {\"id\":\"evt_1\",\"type\":\"session.idle\",\"properties\":{\"type\":\"x\"}}\n\n"),
            Some("session.idle".into())
        );
        assert_eq!(
            t(b"data: {\"directory\":\"/w\",\"payload\":{\"type\":\"permission.asked\"}}\n\n"),
            Some("permission.asked".into())
        );
        assert_eq!(
            t(b"data: {\"type\":\n data: \"split\"}\n\n"),
            None,
            "a continuation line that is not data is not joined"
        );
        assert_eq!(
            t(b"data: {\"type\":\ndata: \"joined\"}\n\n"),
            Some("joined".into())
        );
        assert_eq!(t(b": keep-alive\n\n"), None);
        assert_eq!(t(b"data: not json\n\n"), None);
        assert_eq!(
            t(b"data:{\"type\":\"esc\\u0061ped\"}\n\n"),
            Some("escaped".into())
        );
    }
}
