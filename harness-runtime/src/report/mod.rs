//! The run report: one self-contained `index.html` per run with every scenario's outcome and
//! its timeline (what the agent, the model and the harness did, see [`crate::timeline`]).
//!
//! It reads a finished timeline, redacts it into one record per scenario and writes the record
//! and the page; the runner alone uses it (`runner::report_hook`). It uses only `timeline`,
//! `redact`, `settings` and the scenario's options.

mod error;
mod exploration;
mod history;
mod history_file;
mod history_run;
mod location;
mod page;
mod record;
mod run;
mod skips;
mod usage;
mod verdict;
mod writer;

// The exploring runner builds the diagram's steps as it lands.
#[allow(unused_imports)]
pub(crate) use exploration::{DiagramStep, ExplorationRecord};
pub(crate) use history_run::{add_history, conclude_history};
pub(crate) use location::{report_dir, run_id};
pub(crate) use record::{Outcome, ScenarioRecord};
pub(crate) use skips::skipped_names;
pub(crate) use usage::{TurnUsage, UsageRecord};
pub(crate) use verdict::{VerdictRecord, VerdictRun};
pub(crate) use writer::{regenerate, write_scenario};

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The report reads a finished timeline for the runner; no layer that does the work reaches
    /// it (they write to `timeline`), so it cannot grow a second way in.
    #[test]
    fn only_the_runner_uses_the_report() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut found = Vec::new();
        let mut pending = vec![src.clone()];
        while let Some(dir) = pending.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let relative = path
                    .strip_prefix(&src)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if path.is_dir() {
                    if relative != "report" && relative != "runner" {
                        pending.push(path);
                    }
                } else if relative.ends_with(".rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    // The timeline's own tests may check what the report makes of it.
                    let code = match relative.starts_with("timeline/") {
                        true => text.split("#[cfg(test)]").next().unwrap_or_default(),
                        false => &text,
                    };
                    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                        if names_the_report(line) {
                            found.push(format!("{relative}: {}", line.trim()));
                        }
                    }
                }
            }
        }
        assert!(
            found.is_empty(),
            "only the runner uses `crate::report`; write to `crate::timeline` instead:\n{}",
            found.join("\n")
        );
    }

    /// `crate::report…` or `crate::{…, report…}`.
    fn names_the_report(line: &str) -> bool {
        let is_report = |item: &str| {
            let item = item.trim_start();
            item.strip_prefix("report")
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        };
        line.match_indices("crate::").any(|(at, _)| {
            let rest = &line[at + "crate::".len()..];
            match rest.strip_prefix('{') {
                Some(group) => group.split([',', '}']).any(is_report),
                None => is_report(rest),
            }
        })
    }

    #[test]
    fn a_reference_to_the_report_is_seen() {
        assert!(names_the_report("use crate::report::{Lane, note};"));
        assert!(names_the_report(
            "crate::report::note(Lane::Turn, \"x\", String::new);"
        ));
        assert!(names_the_report("use crate::{redact, report};"));
        assert!(!names_the_report("use crate::runner::report_hook;"));
        assert!(!names_the_report("use crate::timeline::{Lane, note};"));
        assert!(!names_the_report("use crate::reporting::x;"));
    }
}
