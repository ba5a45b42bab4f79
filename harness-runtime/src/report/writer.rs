//! Writing: each process writes its scenarios' records to `runs/<run id>/<scenario>.json`
//! (temp file + rename, so a reader never sees half a record), then regenerates `index.html`
//! from every record of the run under a file lock, so parallel nextest processes add to one
//! report. Older runs are removed but for the last few.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use super::error::ReportError;
use super::page;
use super::record::ScenarioRecord;
use super::run;
use crate::redact::Redactor;

/// Runs kept besides the current one.
const OLDER_RUNS_KEPT: usize = 2;
/// How long a process waits for another one's regeneration.
const LOCK_CEILING: Duration = Duration::from_secs(30);

fn runs_dir(report: &Path) -> PathBuf {
    report.join("runs")
}

/// Writes `record` (redacted already) as part of the run `run_id`; refuses a record in which the
/// scenario's redactor still finds a secret.
pub(crate) fn write_scenario(
    report: &Path,
    run_id: &str,
    record: &ScenarioRecord,
    redactor: &Redactor,
) -> Result<(), ReportError> {
    let json = serde_json::to_string(record).expect("a record serializes");
    if redactor.contains_secret(&json) {
        return Err(ReportError::SecretLeft {
            scenario: record.name.clone(),
        });
    }
    let dir = runs_dir(report).join(run_id);
    fs::create_dir_all(&dir).map_err(ReportError::io("create", &dir))?;
    for stale in run::other_file_names(record) {
        let _ = fs::remove_file(dir.join(stale));
    }
    atomic_write(&dir.join(run::file_name(record)), json.as_bytes())
}

/// Regenerates `index.html` from every record of `run_id` and returns its path.
pub(crate) fn regenerate(report: &Path, run_id: &str) -> Result<PathBuf, ReportError> {
    fs::create_dir_all(report).map_err(ReportError::io("create", report))?;
    let _lock = lock(&report.join(".lock"))?;
    let records = read_run(&runs_dir(report).join(run_id))?;
    let html = page::render(&run::assemble(run_id, records));
    let index = report.join("index.html");
    atomic_write(&index, html.as_bytes())?;
    prune(&runs_dir(report), run_id);
    Ok(index)
}

pub(super) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("report");
    let temp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    fs::write(&temp, bytes).map_err(ReportError::io("write", &temp))?;
    fs::rename(&temp, path).map_err(|e| {
        let _ = fs::remove_file(&temp);
        ReportError::io("replace", path)(e)
    })
}

pub(super) fn lock(path: &Path) -> Result<Flock<fs::File>, ReportError> {
    let deadline = Instant::now() + crate::settings::scaled(LOCK_CEILING);
    loop {
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(ReportError::io("open", path))?;
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(locked) => return Ok(locked),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) if Instant::now() < deadline => {
                // Another process holds the lock and `flock` has no wait with a ceiling: a
                // bounded poll.
                std::thread::sleep(Duration::from_millis(20));
            }
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => {
                return Err(ReportError::Locked {
                    path: path.to_path_buf(),
                    seconds: LOCK_CEILING.as_secs(),
                });
            }
            Err((_, errno)) => return Err(ReportError::io("lock", path)(errno.into())),
        }
    }
}

/// Every record of the run as `(file name, JSON text)`, unparsed (see `run::assemble`); a file
/// that is not a record object is left out.
fn read_run(dir: &Path) -> Result<Vec<(String, String)>, ReportError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(ReportError::io("read", dir)(e)),
    };
    let mut records = Vec::new();
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') || !name.ends_with(".json") {
            continue;
        }
        if let Ok(text) = fs::read_to_string(entry.path()) {
            if text.trim_start().starts_with('{') && text.trim_end().ends_with('}') {
                records.push((name, text));
            }
        }
    }
    Ok(records)
}

/// Removes runs but the current one and the newest few others.
fn prune(runs: &Path, current: &str) {
    let Ok(entries) = fs::read_dir(runs) else {
        return;
    };
    let mut others: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_name() != current)
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    others.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, old) in others.into_iter().skip(OLDER_RUNS_KEPT) {
        let _ = fs::remove_dir_all(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;

    fn record(name: &str, outcome: Outcome) -> ScenarioRecord {
        ScenarioRecord::bare(name, outcome, &crate::scenario::ScenarioOptions::DEFAULT)
    }

    #[test]
    fn records_of_the_run_make_the_index_and_old_runs_go() {
        let report = tempfile::tempdir().unwrap();
        let redactor = Redactor::default();
        for run in ["r1", "r2", "r3"] {
            write_scenario(
                report.path(),
                run,
                &record("a::old", Outcome::Passed),
                &redactor,
            )
            .unwrap();
            regenerate(report.path(), run).unwrap();
            // Runs are ordered by their folders' modification times: these must differ.
            std::thread::sleep(Duration::from_millis(20));
        }
        write_scenario(
            report.path(),
            "r4",
            &record("a::pass", Outcome::Passed),
            &redactor,
        )
        .unwrap();
        write_scenario(
            report.path(),
            "r4",
            &record("a::fail", Outcome::Failed),
            &redactor,
        )
        .unwrap();
        let index = regenerate(report.path(), "r4").unwrap();
        let html = fs::read_to_string(index).unwrap();
        assert!(html.contains("a::fail") && html.contains("a::pass") && !html.contains("a::old"));
        let mut runs: Vec<String> = fs::read_dir(runs_dir(report.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        assert_eq!(runs, ["r2", "r3", "r4"]);
    }

    /// A retried scenario (nextest's retries) shows once, as it ended last.
    #[test]
    fn a_retried_scenario_is_shown_as_it_ended_last() {
        let report = tempfile::tempdir().unwrap();
        let redactor = Redactor::default();
        write_scenario(
            report.path(),
            "r",
            &record("a::flaky", Outcome::Failed),
            &redactor,
        )
        .unwrap();
        write_scenario(
            report.path(),
            "r",
            &record("a::flaky", Outcome::Passed),
            &redactor,
        )
        .unwrap();
        let index = regenerate(report.path(), "r").unwrap();
        let html = fs::read_to_string(index).unwrap();
        assert_eq!(html.matches("\"name\":\"a::flaky\"").count(), 1);
        assert!(html.contains("\"outcome\":\"passed\""));
        assert!(!html.contains("\"outcome\":\"failed\""));
    }

    #[test]
    fn a_record_holding_a_secret_is_refused() {
        let report = tempfile::tempdir().unwrap();
        let redactor = Redactor::default();
        redactor.add_secret("canary-0123456789");
        let mut leaking = record("a::leak", Outcome::Failed);
        leaking.failure = Some("key canary-0123456789".into());
        let error = write_scenario(report.path(), "r", &leaking, &redactor).unwrap_err();
        assert!(matches!(error, ReportError::SecretLeft { .. }), "{error}");
        assert!(
            !runs_dir(report.path())
                .join("r")
                .join("a__leak.json")
                .exists()
        );
    }
}
