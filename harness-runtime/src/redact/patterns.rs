//! The volatile values recognised by shape: ids, UUIDs, loopback ports, timestamps, durations.
//!
//! One combined regex, so a 1 MB log is scanned once. At one position the first alternative
//! wins, so whole tokens (ids, UUIDs) come before the numbers they may contain.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What a match is, and so which placeholder replaces it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Shape {
    /// A numbered identity: `[session-1]`. The str is the placeholder's name.
    Numbered(&'static str),
    /// A loopback address: the host is kept, the port becomes `[port]`.
    HostPort,
    /// `port 4096`, `"port": 4096`, `--port=4096`: the prefix is kept.
    PortKeyword,
    /// A named placeholder for the whole match.
    Named(&'static str),
}

static PATTERN: LazyLock<Regex> = LazyLock::new(|| {
    let unit_any = r"(?:min|ms|µs|us|ns|h|m|s)";
    let unit_end = r"(?:ms|µs|us|ns|s)";
    let alternatives = [
        r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
            .to_owned(),
        r"(?P<id>\b(?P<prefix>ses|msg|prt|per|que|evt)_[0-9A-Za-z]{8,}\b)".to_owned(),
        r"(?P<call>\b(?:call|toolu|fc)_[0-9A-Za-z_\-]{6,}\b)".to_owned(),
        // A root the harness made (`live-<name>-<pid>-<nonce>`) that is not this scenario's,
        // such as a neighbour's on a shared server: its own roots were replaced before.
        r"(?P<liveroot>\blive-[0-9A-Za-z_\-]+-\d+-[0-9a-f]{20}\b)".to_owned(),
        // A git object or OpenCode project id (a random one per workspace).
        r"(?P<hash>\b[0-9a-f]{40}\b)".to_owned(),
        r"(?P<rfc3339>\b\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:[Zz]|[+-]\d{2}:?\d{2}\b)?)"
            .to_owned(),
        r"(?P<httpdate>\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\b)"
            .to_owned(),
        r"(?P<host>\b127\.0\.0\.1|\blocalhost|\b0\.0\.0\.0|\[::1?\]):\d{1,5}\b".to_owned(),
        r#"(?P<portkw>(?i:\bport)["']?\s*[:=]?\s*)\d{2,5}\b"#.to_owned(),
        r"(?P<epoch>\b[12]\d{12}\b)".to_owned(),
        format!(r"(?P<duration>\b(?:\d+(?:\.\d+)?{unit_any}\s?)*\d+(?:\.\d+)?{unit_end}\b)"),
    ];
    Regex::new(&alternatives.join("|")).expect("the redaction patterns are valid")
});

/// The combined pattern.
pub(crate) fn pattern() -> &'static Regex {
    &PATTERN
}

/// Classifies a match of [`pattern`]. `None` means "leave it as it is" (an id-shaped word with no
/// digit, such as `msg_handlers`, is prose, not an id).
pub(crate) fn classify(caps: &Captures<'_>) -> Option<Shape> {
    if caps.name("uuid").is_some() {
        return Some(Shape::Numbered("uuid"));
    }
    if let Some(id) = caps.name("id") {
        if !has_digit(id.as_str()) && !is_opencode_id(id.as_str()) {
            return None;
        }
        let name = match caps.name("prefix").map(|p| p.as_str()) {
            Some("ses") => "session",
            Some("msg") => "message",
            Some("prt") => "part",
            Some("per") => "permission",
            Some("que") => "question",
            _ => "event",
        };
        return Some(Shape::Numbered(name));
    }
    if let Some(call) = caps.name("call") {
        return has_digit(call.as_str()).then_some(Shape::Numbered("call"));
    }
    if caps.name("liveroot").is_some() {
        return Some(Shape::Named("[live-root]"));
    }
    if caps.name("hash").is_some() {
        return Some(Shape::Numbered("hash"));
    }
    if caps.name("rfc3339").is_some()
        || caps.name("httpdate").is_some()
        || caps.name("epoch").is_some()
    {
        return Some(Shape::Named("[timestamp]"));
    }
    if caps.name("host").is_some() {
        return Some(Shape::HostPort);
    }
    if caps.name("portkw").is_some() {
        return Some(Shape::PortKeyword);
    }
    if caps.name("duration").is_some() {
        return Some(Shape::Named("[duration]"));
    }
    None
}

fn has_digit(text: &str) -> bool {
    text.bytes().any(|b| b.is_ascii_digit())
}

/// OpenCode's own id shape: `prefix_` then 12 lowercase hex digits (time and counter) and 14
/// base62 characters. Both parts can lack a digit by chance (`ses_abcdefabcdefXYZ…`), so this
/// shape is an id even where the digit test above would call it prose.
fn is_opencode_id(id: &str) -> bool {
    let Some((_, body)) = id.split_once('_') else {
        return false;
    };
    let body = body.as_bytes();
    body.len() == 26
        && body[..12]
            .iter()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        && body[12..].iter().all(u8::is_ascii_alphanumeric)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shapes(text: &str) -> Vec<(String, Option<Shape>)> {
        pattern()
            .captures_iter(text)
            .map(|c| (c[0].to_owned(), classify(&c)))
            .collect()
    }

    #[test]
    fn model_names_and_versions_are_not_durations() {
        assert_eq!(shapes("gemma3:270m v1.18.33 qwen2.5:7b"), []);
    }

    #[test]
    fn compound_durations_are_one_match() {
        assert_eq!(
            shapes("took 1m 30s then 1.5s and 12.3µs"),
            [
                ("1m 30s".to_owned(), Some(Shape::Named("[duration]"))),
                ("1.5s".to_owned(), Some(Shape::Named("[duration]"))),
                ("12.3µs".to_owned(), Some(Shape::Named("[duration]"))),
            ]
        );
    }

    #[test]
    fn a_neighbours_root_and_a_project_id_are_volatile() {
        let text = "/tmp/live-shared-pool-16467-88ff7d3d839727769283/\
                    live-isolation-cross_talk_1-16467-2eb0af020423279022f8/workspace \
                    64142f77229e93ef8c6a72e2fe786c5f85a2a491";
        assert_eq!(
            shapes(text),
            [
                (
                    "live-shared-pool-16467-88ff7d3d839727769283".to_owned(),
                    Some(Shape::Named("[live-root]"))
                ),
                (
                    "live-isolation-cross_talk_1-16467-2eb0af020423279022f8".to_owned(),
                    Some(Shape::Named("[live-root]"))
                ),
                (
                    "64142f77229e93ef8c6a72e2fe786c5f85a2a491".to_owned(),
                    Some(Shape::Numbered("hash"))
                ),
            ]
        );
    }

    #[test]
    fn an_opencode_id_without_a_digit_is_still_an_id() {
        assert_eq!(
            shapes("evt_aaaaaaaaaaaaaAAaAaAAAAaAAa ses_abcdefabcdefXYZxyzXYZxyzXY"),
            [
                (
                    "evt_aaaaaaaaaaaaaAAaAaAAAAaAAa".to_owned(),
                    Some(Shape::Numbered("event"))
                ),
                (
                    "ses_abcdefabcdefXYZxyzXYZxyzXY".to_owned(),
                    Some(Shape::Numbered("session"))
                ),
            ]
        );
    }

    #[test]
    fn id_shaped_prose_is_kept() {
        assert_eq!(shapes("msg_handlers"), [("msg_handlers".to_owned(), None)]);
    }
}
