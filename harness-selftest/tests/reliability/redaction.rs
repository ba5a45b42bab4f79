//! Redactor fuzzing: no input makes a registered secret survive, in any form the redactor
//! promises (raw, JSON-escaped once or twice, non-ASCII or `/` escaped, URL-encoded), also
//! when secrets overlap each other or registered paths and ports; and placeholders are stable.
//! (`harness-runtime/tests/client_evidence/evidence_redact.rs` holds the exact cases and a small property run.)

use std::collections::HashMap;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Instant;

use harness_runtime::redact::Redactor;
use harness_selftest::prerequisites::Test;
use harness_selftest::test;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use regex::Regex;

/// Every placeholder the redactor writes.
static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\[(?:session|message|part|permission|question|event|call|uuid)-\d+\]|\[(?:secret|port|root|workspace|home|timestamp|duration|tokens|cost)\]",
    )
    .unwrap()
});

/// The output with every placeholder replaced by a NUL (which no secret holds): a secret
/// "found" across a placeholder's letters was made by the placeholder, not leaked.
fn masked(out: &str) -> String {
    PLACEHOLDER.replace_all(out, "\0").into_owned()
}

fn json_body(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap();
    quoted[1..quoted.len() - 1].to_owned()
}

fn json_ascii(s: &str) -> String {
    json_body(s)
        .chars()
        .map(|c| {
            if c.is_ascii() {
                c.to_string()
            } else {
                let mut units = [0u16; 2];
                c.encode_utf16(&mut units)
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect()
            }
        })
        .collect()
}

const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

fn lower_hex(s: &str) -> String {
    let re = Regex::new("%[0-9A-F]{2}").unwrap();
    re.replace_all(s, |c: &regex::Captures<'_>| c[0].to_lowercase())
        .into_owned()
}

/// How a secret is spelled where it lands, as the redactor promises to cover it. The same
/// encoding applied to a whole text applies char by char, so overlapping secrets stay
/// overlapping in every form.
const FORMS: usize = 9;

fn spell(form: usize, s: &str) -> String {
    match form {
        0 => s.to_owned(),
        1 => json_body(s),
        2 => json_body(&json_body(s)),
        3 => json_ascii(s),
        4 => json_body(s).replace('/', "\\/"),
        5 => utf8_percent_encode(s, NON_ALPHANUMERIC).to_string(),
        6 => lower_hex(&utf8_percent_encode(s, NON_ALPHANUMERIC).to_string()),
        7 => utf8_percent_encode(s, URI_COMPONENT).to_string(),
        _ => utf8_percent_encode(s, URI_COMPONENT)
            .to_string()
            .replace("%20", "+"),
    }
}

/// Secrets as hostile as they come: regex metacharacters, quotes, escapes, percent signs,
/// spaces, control characters, accents, CJK, emoji and combining marks, placeholder-like
/// brackets; lengths from 1 up.
fn secret() -> impl Strategy<Value = String> {
    prop_oneof![
        r#"[A-Za-z0-9.*+?()\[\]{}|^$\\/"'%&=# :;,\n\t-]{1,24}"#,
        "[A-Za-z0-9éß日本😀\u{301}\u{200b}]{2,16}",
        "[a-z]{3,10}",
        any::<String>().prop_filter("not empty", |s| !s.is_empty() && !s.contains('\0')),
    ]
}

/// Surrounding text: printable ASCII, OpenCode-like fragments (ids, loopback addresses,
/// numbers, JSON punctuation, escapes), or any Unicode.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~\n]{0,120}",
        "(ses_[0-9A-Za-z]{26}|\"[a-z]{1,6}\":|127\\.0\\.0\\.1:[0-9]{4}|[0-9]{1,14}|ms| |\\\\|\"|%[0-9A-F]{2}|/tmp/live-root|:4[0-9]{3})*",
        any::<String>().prop_map(|s| s.replace('\0', "")),
    ]
}

/// What one case registered and redacted.
#[derive(Debug, Clone)]
struct Case {
    secrets: Vec<String>,
    /// Pieces of input: (text before, index of the secret, form).
    pieces: Vec<(String, usize, usize)>,
    tail: String,
}

fn case() -> impl Strategy<Value = Case> {
    proptest::collection::vec(secret(), 1..6).prop_flat_map(|secrets| {
        let n = secrets.len();
        (
            Just(secrets),
            proptest::collection::vec((text(), 0..n, 0..FORMS), 1..6),
            text(),
        )
            .prop_map(|(secrets, pieces, tail)| Case {
                secrets,
                pieces,
                tail,
            })
    })
}

fn redactor_for(secrets: &[String]) -> Redactor {
    let r = Redactor::default();
    // Paths and a port registered too: their literals compete with the secrets' for a match.
    r.add_path(Path::new("/tmp/live-root"), "[root]");
    r.add_path(Path::new("/tmp/live-root/workspace"), "[workspace]");
    r.add_port(4096);
    for s in secrets {
        r.add_secret(s);
    }
    r
}

/// Whole secrets: after redaction, no secret remains in any promised form.
fn whole_secrets_never_survive(cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let started = Instant::now();
    let bytes = std::cell::Cell::new(0usize);
    runner
        .run(&case(), |c| {
            let r = redactor_for(&c.secrets);
            let mut input = String::new();
            for (before, i, form) in &c.pieces {
                input.push_str(before);
                input.push_str(&spell(*form, &c.secrets[*i]));
            }
            input.push_str(&c.tail);
            bytes.set(bytes.get() + input.len());
            let out = masked(&r.redact(&input));
            for s in &c.secrets {
                for form in 0..FORMS {
                    let spelled = spell(form, s);
                    prop_assert!(
                        !out.contains(&spelled),
                        "secret {s:?} (form {form}: {spelled:?}) survived in {out:?}"
                    );
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "redaction: {cases} cases of 1-5 hostile secrets in 9 forms among hostile text ({} KiB \
         redacted): no secret survived, in {:.2?}",
        bytes.get() / 1024,
        started.elapsed()
    );
}

/// Secret characters and surrounding characters from disjoint alphabets: after redaction no
/// secret character may remain at all, whatever the overlaps. Secrets are windows of a word
/// that cover it completely, overlapping or touching, so a leftover piece of any window shows.
const SECRET_CHARS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&()*+./<=>?@^{|}~\\\"'éß日😀";
const TEXT_CHARS: &str = "abcdefghijklmnopqrstuvwxyz0123456789 ,;_\n";

#[derive(Debug, Clone)]
struct Overlap {
    word: String,
    /// Char ranges of `word` registered as secrets.
    windows: Vec<(usize, usize)>,
    form: usize,
    before: String,
    after: String,
}

fn alphabet(chars: &'static str, len: std::ops::Range<usize>) -> impl Strategy<Value = String> {
    let chars: Vec<char> = chars.chars().collect();
    proptest::collection::vec(proptest::sample::select(chars), len)
        .prop_map(|v| v.into_iter().collect())
}

fn overlap() -> impl Strategy<Value = Overlap> {
    alphabet(SECRET_CHARS, 2..24).prop_flat_map(|word| {
        let len = word.chars().count();
        // Window ends in order; each next window starts at or before the previous end.
        (
            Just(word),
            proptest::collection::vec((1..=len, 0..=len), 1..5),
            0..FORMS,
            alphabet(TEXT_CHARS, 0..20),
            alphabet(TEXT_CHARS, 0..20),
        )
            .prop_map(move |(word, raw, form, before, after)| {
                let mut windows = Vec::new();
                let mut covered = 0;
                let mut ends: Vec<usize> = raw.iter().map(|(e, _)| *e).collect();
                ends.sort_unstable();
                ends.push(len);
                for (end, (_, back)) in ends.into_iter().zip(raw.iter().chain([&(0, 0)])) {
                    if end <= covered {
                        continue;
                    }
                    let start = covered.saturating_sub(*back % (covered + 1));
                    windows.push((start, end));
                    covered = end;
                }
                Overlap {
                    word,
                    windows,
                    form,
                    before,
                    after,
                }
            })
    })
}

fn chars(s: &str, (a, b): (usize, usize)) -> String {
    s.chars().skip(a).take(b - a).collect()
}

fn no_piece_of_overlapping_secrets_survives(cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let started = Instant::now();
    let overlapping = std::cell::Cell::new(0usize);
    runner
        .run(&overlap(), |o| {
            let r = Redactor::default();
            let secrets: Vec<String> = o.windows.iter().map(|w| chars(&o.word, *w)).collect();
            for s in &secrets {
                r.add_secret(s);
            }
            if o.windows.windows(2).any(|w| w[1].0 < w[0].1) {
                overlapping.set(overlapping.get() + 1);
            }
            let input = format!("{}{}{}", o.before, spell(o.form, &o.word), o.after);
            let out = masked(&r.redact(&input));
            let left: String = out.chars().filter(|c| SECRET_CHARS.contains(*c)).collect();
            prop_assert!(
                left.is_empty(),
                "secret characters {left:?} survived: secrets {secrets:?}, form {}, in {input:?} \
                 -> {out:?}",
                o.form
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "redaction: {cases} words covered by 1-5 secrets ({} with overlaps) in 9 \
         forms: no secret character survived, in {:.2?}",
        overlapping.get(),
        started.elapsed()
    );
}

/// Ids of every numbered kind, in random orders and cases, over several calls and through JSON:
/// the same id is always the same placeholder, different ids never share one, and each kind
/// numbers from 1 in order of first sight.
fn id() -> impl Strategy<Value = (&'static str, String)> {
    prop_oneof![
        "ses_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("session", s)),
        "msg_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("message", s)),
        "prt_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("part", s)),
        "per_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("permission", s)),
        "que_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("question", s)),
        "evt_[0-9a-f]{12}[0-9A-Za-z]{14}".prop_map(|s| ("event", s)),
        "(call|toolu|fc)_[0-9]{2}[0-9A-Za-z]{8}".prop_map(|s| ("call", s)),
        "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}".prop_map(|s| ("uuid", s)),
    ]
}

#[derive(Debug, Clone)]
struct Sightings {
    ids: Vec<(&'static str, String)>,
    /// Calls, each a list of (filler text, index into ids, upper-case it (UUIDs only), in JSON).
    calls: Vec<Vec<(String, usize, bool)>>,
    json: Vec<bool>,
}

fn sightings() -> impl Strategy<Value = Sightings> {
    proptest::collection::vec(id(), 1..12).prop_flat_map(|ids| {
        let n = ids.len();
        (
            Just(ids),
            proptest::collection::vec(
                proptest::collection::vec(("[a-z0-9 ,.;:!?\n]{0,30}", 0..n, any::<bool>()), 1..12),
                1..6,
            ),
            proptest::collection::vec(any::<bool>(), 6),
        )
            .prop_map(|(ids, calls, json)| Sightings { ids, calls, json })
    })
}

fn placeholders_stay_stable(cases: u32) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let started = Instant::now();
    let seen_total = std::cell::Cell::new(0usize);
    runner
        .run(&sightings(), |s| {
            let r = Redactor::default();
            // Identity as the redactor promises it: UUIDs whatever their case.
            let identity = |i: usize| s.ids[i].1.to_ascii_lowercase();
            let mut given: HashMap<String, String> = HashMap::new();
            let mut per_kind: HashMap<&str, usize> = HashMap::new();
            for (call, in_json) in s.calls.iter().zip(s.json.iter().cycle()) {
                let spelled: Vec<String> = call
                    .iter()
                    .map(|(_, i, upper)| {
                        let (kind, id) = &s.ids[*i];
                        if *upper && *kind == "uuid" {
                            id.to_ascii_uppercase()
                        } else {
                            id.clone()
                        }
                    })
                    .collect();
                // NUL separates: no id, number or placeholder spans it.
                let placeholders: Vec<String> = if *in_json {
                    let value = serde_json::Value::Array(
                        call.iter()
                            .zip(&spelled)
                            .map(|((filler, _, _), id)| {
                                let mut item = serde_json::Map::new();
                                item.insert("text".into(), filler.clone().into());
                                item.insert("id".into(), id.clone().into());
                                item.insert(id.clone(), 1.into());
                                serde_json::Value::Object(item)
                            })
                            .collect(),
                    );
                    let out = r.redact_json(&value);
                    out.as_array()
                        .unwrap()
                        .iter()
                        .map(|o| o["id"].as_str().unwrap().to_owned())
                        .collect()
                } else {
                    let mut input = String::new();
                    for ((filler, _, _), id) in call.iter().zip(&spelled) {
                        input.push_str(filler);
                        input.push('\0');
                        input.push_str(id);
                        input.push('\0');
                    }
                    r.redact(&input)
                        .split('\0')
                        .skip(1)
                        .step_by(2)
                        .map(str::to_owned)
                        .collect()
                };
                prop_assert_eq!(placeholders.len(), call.len());
                for ((_, i, _), p) in call.iter().zip(&placeholders) {
                    let kind = s.ids[*i].0;
                    let key = identity(*i);
                    match given.get(&key) {
                        Some(before) => {
                            prop_assert_eq!(before, p, "id {} changed placeholder", key)
                        }
                        None => {
                            let n = per_kind.entry(kind).or_insert(0);
                            *n += 1;
                            let expected = format!("[{kind}-{n}]");
                            prop_assert_eq!(&expected, p, "first sight of {}", key);
                            given.insert(key, p.clone());
                        }
                    }
                }
            }
            // Distinct identities, distinct placeholders.
            let mut all: Vec<&String> = given.values().collect();
            all.sort();
            all.dedup();
            prop_assert_eq!(all.len(), given.len());
            seen_total.set(seen_total.get() + given.len());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    println!(
        "redaction: {cases} cases, {} ids of 8 kinds over up to 5 calls, text and JSON: \
         every placeholder stable and distinct, in {:.2?}",
        seen_total.get(),
        started.elapsed()
    );
}

fn no_registered_secret_survives_2000_cases() {
    whole_secrets_never_survive(2000);
}

fn no_piece_of_overlapping_secrets_survives_2000_cases() {
    no_piece_of_overlapping_secrets_survives(2000);
}

fn placeholders_are_stable_2000_cases() {
    placeholders_stay_stable(2000);
}

fn redaction_properties_50000_cases() {
    whole_secrets_never_survive(50_000);
    no_piece_of_overlapping_secrets_survives(50_000);
    placeholders_stay_stable(50_000);
}

/// This module's tests, for `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(no_registered_secret_survives_2000_cases),
        test!(no_piece_of_overlapping_secrets_survives_2000_cases),
        test!(placeholders_are_stable_2000_cases),
        test!(redaction_properties_50000_cases)
            .ignore("heavy: 50,000 cases of each redaction property"),
    ]
}
