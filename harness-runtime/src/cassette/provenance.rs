//! A cassette's provenance: what a recording writes about itself (OpenCode's version, the
//! model as configured and as the upstream named itself, the date, the harness's version, the
//! verdict), and whether a replay of it is stale: recorded with another OpenCode, or older than
//! `LIVE_CASSETTE_MAX_AGE`.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::format::{Interaction, Provenance, RecordedResponse, Verdict};

/// The harness that records: `harness-runtime`'s version.
const HARNESS_VERSION: &str = env!("CARGO_PKG_VERSION");

const SECONDS_PER_DAY: u64 = 24 * 60 * 60;

/// The provenance of a recording of the model `model` (as configured) made now by the OpenCode
/// `opencode`, whose traffic is `interactions` and whose run ended with `verdict`.
pub(crate) fn provenance(
    model: &str,
    opencode: Option<String>,
    interactions: &[Interaction],
    verdict: Verdict,
) -> Provenance {
    Provenance {
        opencode,
        model: model.to_owned(),
        upstream_models: upstream_models(interactions),
        date: today(),
        harness: HARNESS_VERSION.to_owned(),
        verdict,
    }
}

/// The `model` field of every response payload (a body, or each streamed chunk), each name once,
/// in order: the model as the upstream named itself (a server may serve another file than the
/// name it was asked by).
fn upstream_models(interactions: &[Interaction]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let payloads = interactions
        .iter()
        .flat_map(|interaction| match &interaction.response {
            RecordedResponse::Body { body, .. } => vec![body],
            RecordedResponse::Stream { chunks, .. } => chunks.iter().map(|c| &c.data).collect(),
            RecordedResponse::Dropped { .. } => Vec::new(),
        });
    for payload in payloads {
        if let Some(name) = payload.get("model").and_then(Value::as_str) {
            if !name.is_empty() && !names.iter().any(|known| known == name) {
                names.push(name.to_owned());
            }
        }
    }
    names
}

/// Today's UTC date, `YYYY-MM-DD`: a date, not a time (a cassette's age is counted in days,
/// and a file in the repository holds no timestamp).
pub(crate) fn today() -> String {
    let now = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    now[..10].to_owned()
}

/// The day number (days since 1970-01-01) of `date`, when it is a `YYYY-MM-DD` date.
fn day_number(date: &str) -> Option<u64> {
    if date.len() != 10 {
        return None;
    }
    let midnight = humantime::parse_rfc3339(&format!("{date}T00:00:00Z")).ok()?;
    Some(midnight.duration_since(UNIX_EPOCH).ok()?.as_secs() / SECONDS_PER_DAY)
}

/// How a cassette to be replayed stands against this run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Freshness {
    /// Nothing says it is stale.
    Fresh,
    /// Recorded before cassettes kept their provenance: nothing to compare.
    Unknown,
    /// Why it is stale: another OpenCode, past the maximum age.
    Stale(Vec<String>),
}

/// What the run compares a cassette's provenance with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThisRun<'a> {
    /// The OpenCode version that will run, when known.
    pub(crate) opencode: Option<&'a str>,
    /// `LIVE_CASSETTE_MAX_AGE`, when set.
    pub(crate) max_age: Option<Duration>,
    /// Today, `YYYY-MM-DD`.
    pub(crate) today: &'a str,
}

/// Whether a cassette of `provenance` is stale for `run`.
pub(crate) fn freshness(provenance: Option<&Provenance>, run: ThisRun<'_>) -> Freshness {
    let Some(provenance) = provenance else {
        return Freshness::Unknown;
    };
    let mut reasons = Vec::new();
    if let (Some(then), Some(now)) = (provenance.opencode.as_deref(), run.opencode) {
        if then != now {
            reasons.push(format!("recorded with OpenCode {then}, this is {now}"));
        }
    }
    if let Some(max_age) = run.max_age {
        let limit = max_age.as_secs() / SECONDS_PER_DAY;
        let shown = humantime::format_duration(Duration::from_secs(limit * SECONDS_PER_DAY));
        let variable = crate::settings::CASSETTE_MAX_AGE;
        match (day_number(&provenance.date), day_number(run.today)) {
            (Some(then), Some(now)) if now.saturating_sub(then) > limit => {
                let age = now - then;
                reasons.push(format!(
                    "recorded on {}, {age} days ago, past {variable}={shown}",
                    provenance.date
                ));
            }
            (None, _) => reasons.push(format!(
                "its date `{}` is not a YYYY-MM-DD date, so {variable} cannot be checked",
                provenance.date
            )),
            _ => {}
        }
    }
    if reasons.is_empty() {
        Freshness::Fresh
    } else {
        Freshness::Stale(reasons)
    }
}

/// The provenance of the cassette at `path`, read without checking the rest of the file (the
/// replay does that and names what is wrong): `None` when the file or its provenance cannot be
/// read, `Some(None)` when it has none.
pub(crate) fn read_provenance(path: &Path) -> Option<Option<Provenance>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut value: Value = serde_json::from_str(&text).ok()?;
    match value.get_mut("provenance").map(Value::take) {
        None => Some(None),
        Some(provenance) => serde_json::from_value(provenance).ok().map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::{Chunk, NormalizedRequest, StreamEnd, WireApi};
    use serde_json::json;

    fn recorded(opencode: Option<&str>, date: &str) -> Provenance {
        Provenance {
            opencode: opencode.map(str::to_owned),
            model: "m".into(),
            upstream_models: vec![],
            date: date.into(),
            harness: "0.1.0".into(),
            verdict: Verdict::Passed,
        }
    }

    fn run<'a>(opencode: Option<&'a str>, max_age_days: Option<u64>) -> ThisRun<'a> {
        ThisRun {
            opencode,
            max_age: max_age_days.map(|days| Duration::from_secs(days * SECONDS_PER_DAY)),
            today: "2026-12-02",
        }
    }

    #[test]
    fn dates_are_utc_days() {
        let today = today();
        assert_eq!(today.len(), 10, "{today}");
        assert!(day_number(&today).is_some(), "{today}");
        assert_eq!(day_number("1970-01-02"), Some(1));
        assert_eq!(
            day_number("2026-12-02").unwrap() - day_number("2026-11-02").unwrap(),
            30
        );
        for bad in ["2026-13-01", "02.12.2026", "2026-12-02T00:00:00Z", ""] {
            assert_eq!(day_number(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_same_opencode_within_the_age_is_fresh() {
        let same = recorded(Some("1.18.33"), "2026-11-02");
        assert_eq!(
            freshness(Some(&same), run(Some("1.18.33"), Some(30))),
            Freshness::Fresh
        );
        assert_eq!(freshness(Some(&same), run(None, None)), Freshness::Fresh);
        // Unknown on either side: nothing to compare.
        let unknown = recorded(None, "2026-11-02");
        assert_eq!(
            freshness(Some(&unknown), run(Some("1.18.33"), None)),
            Freshness::Fresh
        );
    }

    #[test]
    fn another_opencode_or_an_old_date_is_stale_saying_why() {
        let old = recorded(Some("1.17.0"), "2026-10-01");
        assert_eq!(
            freshness(Some(&old), run(Some("1.18.33"), None)),
            Freshness::Stale(vec![
                "recorded with OpenCode 1.17.0, this is 1.18.33".into()
            ])
        );
        assert_eq!(
            freshness(Some(&old), run(Some("1.17.0"), Some(30))),
            Freshness::Stale(vec![
                "recorded on 2026-10-01, 62 days ago, past LIVE_CASSETTE_MAX_AGE=30days".into()
            ])
        );
        let Freshness::Stale(both) = freshness(Some(&old), run(Some("1.18.33"), Some(30))) else {
            panic!("not stale");
        };
        assert_eq!(both.len(), 2, "{both:?}");
        // Exactly the limit is not past it.
        let edge = recorded(Some("1.18.33"), "2026-11-02");
        assert_eq!(
            freshness(Some(&edge), run(Some("1.18.33"), Some(30))),
            Freshness::Fresh
        );
        let undated = recorded(Some("1.18.33"), "yesterday");
        assert_eq!(
            freshness(Some(&undated), run(Some("1.18.33"), Some(30))),
            Freshness::Stale(vec![
                "its date `yesterday` is not a YYYY-MM-DD date, so LIVE_CASSETTE_MAX_AGE \
                 cannot be checked"
                    .into()
            ])
        );
    }

    #[test]
    fn a_cassette_without_provenance_is_unknown_whatever_the_run() {
        assert_eq!(
            freshness(None, run(Some("1.18.33"), Some(1))),
            Freshness::Unknown
        );
    }

    #[test]
    fn the_upstream_names_itself_in_its_payloads() {
        let request = NormalizedRequest {
            api: WireApi::OpenAi,
            model: "asked".into(),
            stream: true,
            tools: vec![],
            tool_choice: None,
            response_format: None,
            roles: vec!["user".into()],
            last_user_text: None,
            tool_results: vec![],
        };
        let chunk = |data: Value| Chunk {
            after_ms: 0,
            event: None,
            data,
        };
        let interactions = vec![
            Interaction {
                request: request.clone(),
                response: RecordedResponse::Stream {
                    status: 200,
                    content_type: "text/event-stream".into(),
                    headers: Default::default(),
                    chunks: vec![
                        chunk(json!({"model": "served.gguf", "choices": []})),
                        chunk(json!({"model": "served.gguf", "choices": []})),
                        chunk(json!("[DONE]")),
                    ],
                    end: StreamEnd::Complete,
                },
            },
            Interaction {
                request,
                response: RecordedResponse::Body {
                    status: 200,
                    content_type: "application/json".into(),
                    headers: Default::default(),
                    body: json!({"model": "other"}),
                },
            },
        ];
        let made = provenance(
            "asked",
            Some("1.18.33".into()),
            &interactions,
            Verdict::Passed,
        );
        assert_eq!(made.upstream_models, ["served.gguf", "other"]);
        assert_eq!(made.model, "asked");
        assert_eq!(made.harness, env!("CARGO_PKG_VERSION"));
        assert_eq!(made.date, today());
    }

    #[test]
    fn provenance_is_read_without_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        assert_eq!(read_provenance(&path), None, "no file");
        std::fs::write(&path, r#"{"format": 1}"#).unwrap();
        assert_eq!(read_provenance(&path), Some(None));
        let with = json!({"provenance": recorded(Some("1.0.0"), "2026-01-01")});
        std::fs::write(&path, with.to_string()).unwrap();
        assert_eq!(
            read_provenance(&path),
            Some(Some(recorded(Some("1.0.0"), "2026-01-01")))
        );
        std::fs::write(&path, r#"{"provenance": {"date": 3}}"#).unwrap();
        assert_eq!(read_provenance(&path), None, "a broken provenance");
    }
}
