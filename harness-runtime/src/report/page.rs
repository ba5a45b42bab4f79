//! The page: one self-contained `index.html` (inline CSS and JS, no network), the run's data
//! as inline JSON that the page's script renders.

const TEMPLATE: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The page showing `data` (the run's JSON, see `run::assemble`).
pub(crate) fn render(data: &str) -> String {
    TEMPLATE
        .replacen("/*CSS*/", CSS, 1)
        .replacen("/*JS*/", JS, 1)
        .replacen("/*DATA*/", &inline_json(data), 1)
}

/// JSON safe inside `<script>`: `<`, `>` and `&` occur only inside JSON strings, where their
/// `\u` escapes mean the same, so no `</script>` or `<!--` can end or bend the element.
fn inline_json(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use crate::report::run::{assemble, file_name};
    use crate::report::{DiagramStep, ExplorationRecord, Outcome, ScenarioRecord};

    /// The data between the page's `run-data` script tags, parsed.
    fn page_data(html: &str) -> serde_json::Value {
        let start = html.find("id=\"run-data\">").unwrap() + "id=\"run-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        serde_json::from_str(&html[start..end]).unwrap()
    }

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let mut record = ScenarioRecord::bare(
            "a::b",
            Outcome::Failed,
            &crate::scenario::ScenarioOptions::DEFAULT,
        );
        record.failure = Some("</script><script>alert(1)</script> <!-- &".into());
        let json = serde_json::to_string(&record).unwrap();
        let html = render(&assemble("r", vec![(file_name(&record), json)]));
        let data = page_data(&html);
        let back: ScenarioRecord = serde_json::from_value(data["scenarios"][0].clone()).unwrap();
        assert_eq!(back, record);
        assert!(
            !html.contains("https://") && !html.contains("http://"),
            "no network"
        );
    }

    /// An exploring scenario's search reaches the page whole, redacted as the rest: a secret in
    /// a step's label, a held step, the replay line or the divergence is `[secret]` there.
    #[test]
    fn an_exploration_reaches_the_page_redacted() {
        const CANARY: &str = "canary-exploration-7c1d";
        let redactor = Redactor::default();
        redactor.add_secret(CANARY);
        // A step released alone: its kind is its label's first word.
        let alone = |label: &str| DiagramStep {
            kind: label.split(' ').next().unwrap().to_owned(),
            label: label.to_owned(),
            ..DiagramStep::default()
        };
        let exploration = ExplorationRecord {
            mode: "random".into(),
            seed: Some(1234),
            budget_runs: 200,
            runs: 13,
            schedules: 7,
            exhausted: false,
            space: None,
            failed: true,
            schedule: Some("da2a.1>b7c1.1".into()),
            found: Some("11fe.2>0c1e.1,da2a.1>b7c1.1,0c1e.9>3566.2".into()),
            shrink_runs: 4,
            reproduced: Some((2, 2)),
            replay_command: Some(format!(
                "LIVE_SCHEDULE='da2a.1>b7c1.1' cargo test --test live -- product::{CANARY} --exact"
            )),
            diverged: Some(format!("decision 3: no held step has tag a9f2 ({CANARY})")),
            steps: vec![
                alone("request POST /session/{sessionID}/message"),
                alone("event message.part.delta (stream 1)"),
                alone("event message.part.delta (stream 1)"),
                DiagramStep {
                    kind: "response".into(),
                    label: format!("response POST /permission/{CANARY}/reply"),
                    decision: Some(1),
                    deviated: true,
                    held: vec![format!("event session.idle (stream 1) {CANARY}")],
                    repeats: 0,
                },
                alone("product before_reply"),
            ],
            steps_left_out: 0,
        }
        .folded();
        let mut record = ScenarioRecord::bare(
            "explore::race",
            Outcome::Failed,
            &crate::scenario::ScenarioOptions::DEFAULT,
        );
        record.exploration = Some(exploration);
        let record = record.redacted(&redactor);
        let json = serde_json::to_string(&record).unwrap();
        let html = render(&assemble("r", vec![(file_name(&record), json)]));
        assert!(!html.contains(CANARY), "a secret reached the page");
        assert!(!redactor.contains_secret(&html));

        let data = page_data(&html);
        let shown = &data["scenarios"][0]["exploration"];
        assert_eq!(shown["mode"], "random");
        assert_eq!(shown["seed"], 1234);
        assert_eq!(
            shown["schedule"], "da2a.1>b7c1.1",
            "a schedule is no redactor's shape"
        );
        assert_eq!(shown["found"], "11fe.2>0c1e.1,da2a.1>b7c1.1,0c1e.9>3566.2");
        assert_eq!(shown["reproduced"], serde_json::json!([2, 2]));
        assert_eq!(
            shown["replay_command"],
            "LIVE_SCHEDULE='da2a.1>b7c1.1' cargo test --test live -- product::[secret] --exact"
        );
        assert_eq!(
            shown["steps"].as_array().unwrap().len(),
            4,
            "the deltas fold"
        );
        assert_eq!(shown["steps"][1]["repeats"], 1);
        assert_eq!(shown["steps"][2]["decision"], 1);
        assert_eq!(shown["steps"][2]["deviated"], true);
        assert_eq!(
            shown["steps"][2]["label"],
            "response POST /permission/[secret]/reply"
        );
        assert_eq!(
            shown["steps"][2]["held"][0],
            "event session.idle (stream 1) [secret]"
        );
        assert!(
            shown["steps"][3].get("deviated").is_none(),
            "false is left out"
        );
        let back: ScenarioRecord = serde_json::from_value(data["scenarios"][0].clone()).unwrap();
        assert_eq!(back, record);
    }

    /// A record without an exploration has no such key: the page shows it as before.
    #[test]
    fn a_record_without_an_exploration_has_none_in_the_data() {
        let record = ScenarioRecord::bare(
            "a::b",
            Outcome::Passed,
            &crate::scenario::ScenarioOptions::DEFAULT,
        );
        let json = serde_json::to_string(&record).unwrap();
        assert!(!json.contains("exploration"), "{json}");
    }
}
