//! A run: every scenario record of one run id, assembled into the page's data without parsing
//! them again. Under nextest every process regenerates the page, so that must stay cheap for
//! hundreds of scenarios: a record's file name carries its outcome's rank, and the order the index
//! shows (failures first, then skips, ignored, passes; by name within each) and the counts come
//! from the names alone.

use super::location::sanitize;
use super::record::ScenarioRecord;

/// `<rank>-<scenario>.json`: `0-topic__fails.json` sorts before `3-topic__passes.json`.
pub(crate) fn file_name(record: &ScenarioRecord) -> String {
    format!("{}-{}.json", record.outcome.rank(), sanitize(&record.name))
}

/// The file names the scenario's record has under the other outcomes (a retried scenario's
/// earlier record, which its new one replaces).
pub(crate) fn other_file_names(record: &ScenarioRecord) -> Vec<String> {
    let rank = record.outcome.rank();
    (0..4u8)
        .filter(|other| *other != rank)
        .map(|other| format!("{other}-{}.json", sanitize(&record.name)))
        .collect()
}

/// The page's data, `{"counts":{…},"run_id":…,"scenarios":[…]}`, from every record of the run as
/// `(file name, JSON text)`.
pub(crate) fn assemble(run_id: &str, mut records: Vec<(String, String)>) -> String {
    records.sort_by(|a, b| a.0.cmp(&b.0));
    let mut by_rank = [0usize; 4];
    for (name, _) in &records {
        if let Some(rank) = name.chars().next().and_then(|c| c.to_digit(10)) {
            by_rank[(rank as usize).min(3)] += 1;
        }
    }
    let head = serde_json::json!({
        "run_id": run_id,
        "counts": {
            "total": records.len(),
            "failed": by_rank[0],
            "skipped": by_rank[1],
            "ignored": by_rank[2],
            "passed": by_rank[3],
        },
    })
    .to_string();
    let size = head.len()
        + records
            .iter()
            .map(|(_, json)| json.len() + 1)
            .sum::<usize>()
        + 16;
    let mut data = String::with_capacity(size);
    data.push_str(head.strip_suffix('}').expect("an object"));
    data.push_str(",\"scenarios\":[");
    for (i, (_, json)) in records.iter().enumerate() {
        if i > 0 {
            data.push(',');
        }
        data.push_str(json.trim());
    }
    data.push_str("]}");
    data
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use crate::report::record::Outcome;
    use crate::timeline::{Entry, KeptRoot, Lane};

    const CANARY: &str = "sk-canary-5f0e1d2c3b4a";

    fn redactor() -> Redactor {
        let config = format!(
            r#"{{"provider":{{"ollama":{{"options":{{"baseURL":"http://127.0.0.1:11434/v1","apiKey":"{CANARY}"}}}}}}}}"#
        );
        Redactor::from_env_iter([("OPENCODE_CONFIG_CONTENT", config)])
    }

    fn entry(at_ms: f64, lane: Lane, kind: &str, text: &str) -> Entry {
        Entry {
            at_ms,
            lane,
            kind: kind.into(),
            text: text.into(),
            key: None,
            count: 1,
        }
    }

    /// A run with a pass, a failure and a skip, as the page gets it: failures first, then the
    /// skip, then the pass; the counts; every field; the canary nowhere, `[secret]` in its place.
    #[test]
    fn a_run_is_ordered_counted_and_redacted() {
        let redactor = redactor();
        // Explicit: the suite's level (`LIVE_ISOLATION`) must not decide this test's outcome.
        let options = crate::scenario::ScenarioOptions {
            isolation: Some(crate::Isolation::Server),
            ..crate::scenario::ScenarioOptions::DEFAULT
        };
        let passed = ScenarioRecord::bare("a::passes", Outcome::Passed, &options);
        let mut skipped = ScenarioRecord::bare("b::skips", Outcome::Skipped, &options);
        skipped.reason = Some("requires TOKEN: TOKEN is not set".into());
        let mut failed = ScenarioRecord::bare("c::fails", Outcome::Failed, &options);
        failed.duration_ms = 1234;
        failed.failure = Some(format!("the server said: invalid key {CANARY}"));
        failed.entries = vec![
            entry(
                1.0,
                Lane::Provisioning,
                "spawn",
                &format!("OPENCODE_CONFIG_CONTENT={{\"apiKey\":\"{CANARY}\"}}"),
            ),
            entry(
                2.5,
                Lane::Model,
                "request 1 miss",
                "nothing in the script answered it",
            ),
        ];
        failed.evidence = vec![(
            "text".into(),
            serde_json::json!({ "said": CANARY, "tokens": 12 }),
        )];
        failed.kept_roots = vec![KeptRoot {
            path: "/tmp/live-c__fails-1".into(),
            log_tail: format!("Authorization: Bearer {CANARY}"),
        }];
        let records = [passed, skipped, failed]
            .into_iter()
            .map(|r| r.redacted(&redactor))
            .map(|r| (file_name(&r), serde_json::to_string(&r).unwrap()))
            .collect();
        let data = assemble("run-1", records);
        let json: serde_json::Value = serde_json::from_str(&data).unwrap();
        assert_eq!(json["run_id"], "run-1");

        let names: Vec<&str> = json["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c::fails", "b::skips", "a::passes"]);
        assert_eq!(
            json["counts"],
            serde_json::json!({"total": 3, "failed": 1, "passed": 1, "skipped": 1, "ignored": 0})
        );
        let failed = &json["scenarios"][0];
        assert_eq!(failed["outcome"], "failed");
        assert_eq!(failed["duration_ms"], 1234);
        assert_eq!(failed["agent"], "opencode");
        assert_eq!(failed["isolation"], "server");
        assert_eq!(failed["model"], "scripted");
        assert_eq!(failed["entries"][1]["lane"], "model");
        assert_eq!(failed["entries"][1]["at_ms"], 2.5);
        assert_eq!(failed["failure"], "the server said: invalid key [secret]");
        assert_eq!(
            failed["evidence"][0][1]["tokens"], 12,
            "numbers stay numbers"
        );
        assert_eq!(failed["kept_roots"][0]["path"], "/tmp/live-c__fails-1");
        assert_eq!(
            json["scenarios"][1]["reason"],
            "requires TOKEN: TOKEN is not set"
        );
        assert!(json["scenarios"][2].get("failure").is_none());

        let text = json.to_string();
        assert!(!text.contains(CANARY), "{text}");
        assert_eq!(text.matches("[secret]").count(), 4, "{text}");
        assert!(!redactor.contains_secret(&data));
    }
}
