//! The accepted evidence (`snapshots/*.snap`) holds structural facts only: no ids, UUIDs,
//! loopback ports, temp paths or timestamps that would make a snapshot flaky or leak a run's
//! details. The redactor should have replaced all of them; this scans the files independently
//! of it, so a gap in the redactor or a hand-edited snapshot is caught here.

use std::path::Path;

/// One volatile value found in a snapshot.
#[derive(Debug, PartialEq, Eq)]
struct Finding {
    line: usize,
    kind: &'static str,
    text: String,
}

/// The id prefixes of OpenCode (`ses_`, `msg_`, …) and of tool calls (`call_`).
const ID_PREFIXES: &[&str] = &["ses_", "msg_", "prt_", "per_", "que_", "evt_", "call_"];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_id_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// How many bytes from `at` match `pattern`, where `d` is a digit, `h` a hex digit, `T` one of
/// `T`, `t` or a space, and any other byte itself; `None` if they do not.
fn shape(bytes: &[u8], at: usize, pattern: &str) -> Option<usize> {
    let pattern = pattern.as_bytes();
    let window = bytes.get(at..at + pattern.len())?;
    let fits = window.iter().zip(pattern).all(|(&b, &p)| match p {
        b'd' => b.is_ascii_digit(),
        b'h' => b.is_ascii_hexdigit(),
        b'T' => matches!(b, b'T' | b't' | b' '),
        _ => b == p,
    });
    fits.then_some(pattern.len())
}

/// The volatile values in one line, each as `(kind, matched text)`.
fn scan_line(line: &str) -> Vec<(&'static str, String)> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let boundary = at == 0 || !is_word(bytes[at - 1]);
        let digit_boundary = at == 0 || !bytes[at - 1].is_ascii_digit();
        let hex_boundary = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let mut hit: Option<(&'static str, usize)> = None;

        if boundary {
            for prefix in ID_PREFIXES {
                if line[at..].starts_with(prefix) {
                    let start = at + prefix.len();
                    let len = bytes[start..]
                        .iter()
                        .take_while(|&&b| is_id_char(b))
                        .count();
                    let body = &bytes[start..start + len];
                    // `msg_handlers` is prose; an id has at least six characters and a digit.
                    if len >= 6 && body.iter().any(u8::is_ascii_digit) {
                        hit = Some(("id", prefix.len() + len));
                    }
                }
            }
        }
        if hit.is_none() && hex_boundary {
            if let Some(len) = shape(bytes, at, "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh") {
                hit = Some(("uuid", len));
            }
        }
        if hit.is_none() && line[at..].starts_with("127.0.0.1:") {
            let digits = bytes[at + 10..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if digits > 0 {
                hit = Some(("loopback port", 10 + digits));
            }
        }
        if hit.is_none() && line[at..].starts_with("/tmp/") {
            hit = Some(("temp path", 5));
        }
        if hit.is_none() && digit_boundary {
            if let Some(len) = shape(bytes, at, "dddd-dd-ddTdd:dd") {
                hit = Some(("rfc3339 timestamp", len));
            } else {
                let digits = bytes[at..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count();
                // Milliseconds since the epoch: 13 digits from 2001 (`1…`) to 2286 (`2…`).
                if digits == 13 && matches!(bytes[at], b'1' | b'2') {
                    hit = Some(("epoch-ms timestamp", digits));
                }
            }
        }

        match hit {
            Some((kind, len)) => {
                found.push((kind, line[at..at + len].to_string()));
                at += len;
            }
            None => at += line[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    found
}

/// Every volatile value in `text`, with its 1-based line.
fn scan(text: &str) -> Vec<Finding> {
    text.lines()
        .enumerate()
        .flat_map(|(i, line)| {
            scan_line(line)
                .into_iter()
                .map(move |(kind, text)| Finding {
                    line: i + 1,
                    kind,
                    text,
                })
        })
        .collect()
}

#[test]
fn accepted_snapshots_hold_no_volatile_values() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let mut scanned = 0;
    let mut problems = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("the suite has a snapshots/ folder") {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "snap") {
            continue;
        }
        scanned += 1;
        let text = std::fs::read_to_string(&path).unwrap();
        for finding in scan(&text) {
            problems.push(format!(
                "{}:{}: {} `{}`",
                path.file_name().unwrap().to_string_lossy(),
                finding.line,
                finding.kind,
                finding.text
            ));
        }
    }
    assert!(scanned > 0, "no .snap file in {}", dir.display());
    assert!(
        problems.is_empty(),
        "accepted snapshots hold volatile values (the redactor missed them, or the snapshot was \
         edited by hand); fix the redaction and re-accept:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_scanner_finds_every_kind_in_a_dirty_sample() {
    let dirty = "\
session: ses_6f2a9c01ffeEXAMPLEabcdEF
message: msg_6f2a9c0200012AbCdEfGhIjK
parts: [prt_6f2a9c0300013XyZ, per_0a1b2c3d4e, que_9z8y7x6w5v, evt_1234567890ab]
call: call_0_a1B2c3D4e5
trace: 123e4567-e89b-12d3-a456-426614174000
endpoint: http://127.0.0.1:41234/session
root: /tmp/live-turns-plain-1234-abc/workspace
created: 1764451200123
at: 2025-11-29T21:40:00.123Z
";
    let kinds: Vec<&str> = scan(dirty).iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            "id",
            "id",
            "id",
            "id",
            "id",
            "id",
            "id",
            "uuid",
            "loopback port",
            "temp path",
            "epoch-ms timestamp",
            "rfc3339 timestamp"
        ],
        "{:#?}",
        scan(dirty)
    );
    assert_eq!(
        scan("x: 127.0.0.1:4096")[0],
        Finding {
            line: 1,
            kind: "loopback port",
            text: "127.0.0.1:4096".into()
        }
    );
    assert_eq!(scan("a\nb\nat 2025-01-02 03:04:05")[0].line, 3);
}

#[test]
fn the_scanner_leaves_redacted_evidence_alone() {
    let clean = "\
---
source: harness-runtime/src/evidence/snapshot.rs
description: \"evidence of the live scenario `turns::plain_text_reply`\"
---
- turn:
    session: \"[session-1]\"
    message: \"[message-2]\"
    call: \"[call-1]\"
    events:
      - session.status ×4
      - message.part.updated
    endpoint: \"http://127.0.0.1:[port-opencode]\"
    root: \"[root]/workspace\"
    at: \"[timestamp]\"
    took: \"[duration]\"
    msg_handlers: 3
    tool_call_count: 1
    tokens: 1234567890
    big: 12345678901234
    hash: deadbeefcafe
- model_requests:
    - last_user_text: Say hello
";
    assert_eq!(scan(clean), []);
}
