//! The run report a scenario binary wrote (`LIVE_REPORT`), read back: the data its page renders.

use std::path::Path;

use serde_json::Value;

/// The data the report's page in `dir` renders, read back from its inline JSON.
pub fn report_data(dir: &Path) -> Value {
    let html = std::fs::read_to_string(dir.join("index.html")).expect("the report's index.html");
    let open = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(open).expect("the inline data") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("the inline data is JSON")
}

/// The record of the scenario `name` in the report's `data`.
pub fn scenario<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["scenarios"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no record of {name} in {data:#}"))
}
