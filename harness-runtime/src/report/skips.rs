//! The run's skipped scenarios as its records say, for the runner's closing line under nextest
//! (every process of a nextest run adds its records to one run): their names, read from the
//! records whose file name carries the skipped rank.

use std::fs;
use std::path::Path;

use serde::Deserialize;

use super::record::Outcome;

/// The part of a record the line needs.
#[derive(Deserialize)]
struct Named {
    name: String,
}

/// The names of the run's skipped scenarios, sorted; none when the run has no record yet.
pub(crate) fn skipped_names(report: &Path, run_id: &str) -> Vec<String> {
    let prefix = format!("{}-", Outcome::Skipped.rank());
    let dir = report.join("runs").join(run_id);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            name.starts_with(&prefix) && name.ends_with(".json")
        })
        .filter_map(|entry| fs::read_to_string(entry.path()).ok())
        .filter_map(|text| serde_json::from_str::<Named>(&text).ok())
        .map(|named| named.name)
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_skipped_records_of_the_run_are_named() {
        let report = tempfile::tempdir().unwrap();
        let run = report.path().join("runs/r1");
        fs::create_dir_all(&run).unwrap();
        let write = |file: &str, name: &str| {
            let json = format!(r#"{{"name":"{name}","outcome":"x","duration_ms":0}}"#);
            fs::write(run.join(file), json).unwrap();
        };
        write("1-probes__tool_call.json", "probes::tool_call");
        write("1-probes__basic_turn.json", "probes::basic_turn");
        write("3-turns__plain.json", "turns::plain");
        write("0-turns__fails.json", "turns::fails");
        fs::write(run.join("1-broken.json"), "{").unwrap();
        assert_eq!(
            skipped_names(report.path(), "r1"),
            ["probes::basic_turn", "probes::tool_call"]
        );
        assert!(skipped_names(report.path(), "r2").is_empty());
    }
}
