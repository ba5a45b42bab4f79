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
    use crate::report::run::{assemble, file_name};
    use crate::report::{Outcome, ScenarioRecord};

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let mut record =
            ScenarioRecord::bare("a::b", Outcome::Failed, &crate::ScenarioOptions::DEFAULT);
        record.failure = Some("</script><script>alert(1)</script> <!-- &".into());
        let json = serde_json::to_string(&record).unwrap();
        let html = render(&assemble("r", vec![(file_name(&record), json)]));
        let start = html.find("id=\"run-data\">").unwrap() + "id=\"run-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
        let back: ScenarioRecord = serde_json::from_value(data["scenarios"][0].clone()).unwrap();
        assert_eq!(back, record);
        assert!(
            !html.contains("https://") && !html.contains("http://"),
            "no network"
        );
    }
}
