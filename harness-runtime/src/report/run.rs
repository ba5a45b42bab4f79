//! A run: every scenario record of one run id, in the order the index shows them.

use serde::{Deserialize, Serialize};

use super::record::{Outcome, ScenarioRecord};

/// What the page renders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunReport {
    pub(crate) run_id: String,
    pub(crate) counts: Counts,
    /// Failures first, then skipped, ignored, passed; by name within each.
    pub(crate) scenarios: Vec<ScenarioRecord>,
}

/// How many scenarios ended each way.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Counts {
    pub(crate) total: usize,
    pub(crate) failed: usize,
    pub(crate) passed: usize,
    pub(crate) skipped: usize,
    pub(crate) ignored: usize,
}

impl RunReport {
    pub(crate) fn new(run_id: &str, mut scenarios: Vec<ScenarioRecord>) -> Self {
        scenarios.sort_by(|a, b| (a.outcome.rank(), &a.name).cmp(&(b.outcome.rank(), &b.name)));
        let mut counts = Counts {
            total: scenarios.len(),
            ..Counts::default()
        };
        for scenario in &scenarios {
            *match scenario.outcome {
                Outcome::Failed => &mut counts.failed,
                Outcome::Passed => &mut counts.passed,
                Outcome::Skipped => &mut counts.skipped,
                Outcome::Ignored => &mut counts.ignored,
            } += 1;
        }
        RunReport {
            run_id: run_id.to_owned(),
            counts,
            scenarios,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use crate::report::record::{Entry, KeptRoot, Lane};

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
        let options = crate::ScenarioOptions::DEFAULT;
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
            .collect();
        let run = RunReport::new("run-1", records);
        let json = serde_json::to_value(&run).unwrap();

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
        let page = super::super::page::render(&run);
        assert!(!page.contains(CANARY));
        assert!(!redactor.contains_secret(&page));
    }
}
