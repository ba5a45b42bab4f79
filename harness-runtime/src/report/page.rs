//! The page: one self-contained `index.html` (inline CSS and JS, no network), the run's data
//! as inline JSON that the page's script renders.

use super::run::RunReport;

const TEMPLATE: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The page of `run`.
pub(crate) fn render(run: &RunReport) -> String {
    let data = serde_json::to_string(run).expect("a run serializes");
    TEMPLATE
        .replacen("/*CSS*/", CSS, 1)
        .replacen("/*JS*/", JS, 1)
        .replacen("/*DATA*/", &inline_json(&data), 1)
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
    use crate::report::{Outcome, ScenarioRecord};

    #[test]
    fn the_data_cannot_close_its_script_element() {
        let mut record =
            ScenarioRecord::bare("a::b", Outcome::Failed, &crate::ScenarioOptions::DEFAULT);
        record.failure = Some("</script><script>alert(1)</script> <!-- &".into());
        let html = render(&RunReport::new("r", vec![record.clone()]));
        let start = html.find("id=\"run-data\">").unwrap() + "id=\"run-data\">".len();
        let end = start + html[start..].find("</script>").unwrap();
        let data: RunReport = serde_json::from_str(&html[start..end]).unwrap();
        assert_eq!(data.scenarios, vec![record]);
        assert!(
            !html.contains("https://") && !html.contains("http://"),
            "no network"
        );
    }
}
