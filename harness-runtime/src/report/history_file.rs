//! Where the history lives and how it is written: one small file per scenario,
//! `<history dir>/<scenario>.json` (`LIVE_HISTORY`, else `<report dir>/history`), so a process
//! reads and rewrites only its own scenarios'. A process adds its outcomes when its run ends,
//! under the folder's lock, each file replaced whole (temp file + rename): concurrent runs and a
//! nextest run's processes lose none of each other's. A file that cannot be read is set aside
//! (`<scenario>.json.unreadable`) with a note; the history never fails a run.

use std::fs;
use std::path::{Path, PathBuf};

use super::history::{PastOutcome, ScenarioHistory};
use super::location::sanitize;
use super::writer::{atomic_write, lock};
use crate::settings::{self, HistoryPlace};

/// Scenario files kept: a suite's scenarios, and then some for renamed ones (the oldest go).
const FILES_KEPT: usize = 2000;

/// The history folder of a report in `report`; `None` when `LIVE_HISTORY=off` (or invalid, which
/// the runner reported before any trial).
pub(crate) fn history_dir(report: &Path) -> Option<PathBuf> {
    match settings::history_place() {
        Ok(Some(HistoryPlace::Off)) | Err(_) => None,
        Ok(Some(HistoryPlace::Dir(dir))) => Some(dir),
        Ok(None) => Some(report.join("history")),
    }
}

fn file(dir: &Path, scenario: &str) -> PathBuf {
    dir.join(format!("{}.json", sanitize(scenario)))
}

/// What a scenario's file holds, if it holds a history of this scenario.
enum Read {
    Found(ScenarioHistory),
    None,
    Unreadable(String),
}

fn read_file(dir: &Path, scenario: &str) -> Read {
    let path = file(dir, scenario);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Read::None,
        Err(e) => return Read::Unreadable(e.to_string()),
    };
    match serde_json::from_str::<ScenarioHistory>(&text) {
        // Another name that makes the same file name: this scenario has no history yet.
        Ok(history) if history.scenario != scenario => Read::None,
        Ok(history) => Read::Found(history),
        Err(e) => Read::Unreadable(e.to_string()),
    }
}

/// The scenario's history as its file holds it now: empty when there is none or it cannot be
/// read (set aside when the run ends, see [`add`]).
pub(crate) fn read(dir: &Path, scenario: &str) -> ScenarioHistory {
    match read_file(dir, scenario) {
        Read::Found(history) => history,
        Read::None | Read::Unreadable(_) => ScenarioHistory::new(scenario),
    }
}

/// Adds each scenario's outcome to its file, under the folder's lock. Returns a line for each
/// thing that went wrong (a file set aside, the history not written), for stderr.
pub(crate) fn add(dir: &Path, outcomes: Vec<(String, PastOutcome)>) -> Vec<String> {
    let mut notes = Vec::new();
    if let Err(e) = fs::create_dir_all(dir) {
        notes.push(format!(
            "not written: could not create {}: {e}; set LIVE_HISTORY to a writable folder, or \
             LIVE_HISTORY=off",
            dir.display()
        ));
        return notes;
    }
    let _lock = match lock(&dir.join(".lock")) {
        Ok(lock) => lock,
        Err(e) => {
            notes.push(format!("not written: {e}"));
            return notes;
        }
    };
    for (scenario, outcome) in outcomes {
        let path = file(dir, &scenario);
        let mut history = match read_file(dir, &scenario) {
            Read::Found(history) => history,
            Read::None => ScenarioHistory::new(&scenario),
            Read::Unreadable(why) => {
                notes.push(set_aside(&path, &why));
                ScenarioHistory::new(&scenario)
            }
        };
        history.add(outcome);
        let json = serde_json::to_string(&history).expect("a history serializes");
        if let Err(e) = atomic_write(&path, json.as_bytes()) {
            notes.push(format!("not written: {e}"));
        }
    }
    prune(dir);
    notes
}

/// Moves an unreadable file out of the way (replacing an earlier one set aside) and says so.
fn set_aside(path: &Path, why: &str) -> String {
    let aside = path.with_extension("json.unreadable");
    match fs::rename(path, &aside) {
        Ok(()) => format!(
            "{} could not be read ({why}): set aside as {}, its scenario's history starts afresh",
            path.display(),
            aside.display()
        ),
        Err(e) => format!(
            "{} could not be read ({why}) nor set aside ({e}): it is replaced",
            path.display()
        ),
    }
}

/// Removes the least recently written scenario files beyond [`FILES_KEPT`].
fn prune(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !name.starts_with('.') && name.ends_with(".json")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    if files.len() <= FILES_KEPT {
        return;
    }
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    for (_, old) in files.into_iter().skip(FILES_KEPT) {
        let _ = fs::remove_file(old);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::history::{HistoryOutcome as Outcome, KEPT};

    fn past(run: &str, outcome: Outcome) -> PastOutcome {
        PastOutcome {
            run: run.to_owned(),
            at: "2026-12-02T00:00:00Z".to_owned(),
            outcome,
            failure: None,
            verdict: None,
        }
    }

    fn runs_of(dir: &Path, scenario: &str) -> Vec<String> {
        read(dir, scenario)
            .outcomes
            .into_iter()
            .map(|o| o.run)
            .collect()
    }

    #[test]
    fn outcomes_are_added_to_each_scenarios_file_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        for run in 0..KEPT + 3 {
            let notes = add(
                dir.path(),
                vec![
                    ("a::one".into(), past(&format!("r{run}"), Outcome::Passed)),
                    ("b::two".into(), past(&format!("r{run}"), Outcome::Failed)),
                ],
            );
            assert!(notes.is_empty(), "{notes:?}");
        }
        let one = runs_of(dir.path(), "a::one");
        assert_eq!(one.len(), KEPT);
        assert_eq!(one.first().map(String::as_str), Some("r3"));
        assert_eq!(
            read(dir.path(), "b::two").outcomes[0].outcome,
            Outcome::Failed
        );
        assert!(read(dir.path(), "c::never").outcomes.is_empty());
    }

    /// A file that is not a history is set aside with a note naming both paths; the scenario's
    /// history starts afresh and the run goes on.
    #[test]
    fn an_unreadable_file_is_set_aside_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let path = file(dir.path(), "a::b");
        fs::write(&path, "{\"scenario\": \"a::b\", \"outcomes\": [tru").unwrap();
        assert!(read(dir.path(), "a::b").outcomes.is_empty());

        let notes = add(
            dir.path(),
            vec![("a::b".into(), past("r1", Outcome::Passed))],
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].contains("a__b.json could not be read (")
                && notes[0].ends_with("a__b.json.unreadable, its scenario's history starts afresh"),
            "{notes:?}"
        );
        assert!(!notes[0].contains('\n'), "one line: {notes:?}");
        assert_eq!(runs_of(dir.path(), "a::b"), ["r1"]);
        assert!(
            fs::read_to_string(dir.path().join("a__b.json.unreadable"))
                .unwrap()
                .ends_with("[tru")
        );
    }

    /// A folder that cannot be made says so and fails nothing.
    #[test]
    fn a_history_that_cannot_be_written_is_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let blocked = dir.path().join("file");
        fs::write(&blocked, "").unwrap();
        let notes = add(
            &blocked.join("history"),
            vec![("a::b".into(), past("r1", Outcome::Passed))],
        );
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("not written: could not create "),
            "{notes:?}"
        );
    }

    /// Writers at once (threads here, each with its own open lock file as separate processes
    /// have), each adding its run's outcome to one scenario's file: none is lost.
    #[test]
    fn concurrent_writers_lose_no_outcome() {
        let dir = tempfile::tempdir().unwrap();
        // Every run kept: at most KEPT outcomes of the shared scenario.
        let (writers, rounds) = (10, 2);
        assert!(writers * rounds <= KEPT);
        let together = std::sync::Barrier::new(writers);
        // Each writer's notes, checked after all ended (a panic in one would leave the others
        // waiting at the barrier).
        let notes: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..writers)
                .map(|writer| {
                    let (dir, together) = (dir.path(), &together);
                    scope.spawn(move || {
                        let mut notes = Vec::new();
                        for round in 0..rounds {
                            together.wait();
                            let run = format!("w{writer}-{round}");
                            notes.extend(add(
                                dir,
                                vec![
                                    ("shared::one".into(), past(&run, Outcome::Passed)),
                                    (format!("own::w{writer}"), past(&run, Outcome::Passed)),
                                ],
                            ));
                        }
                        notes
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        let mut runs = runs_of(dir.path(), "shared::one");
        runs.sort();
        let mut expected: Vec<String> = (0..writers)
            .flat_map(|w| (0..rounds).map(move |r| format!("w{w}-{r}")))
            .collect();
        expected.sort();
        assert_eq!(runs, expected, "notes: {notes:?}");
        for writer in 0..writers {
            assert_eq!(
                runs_of(dir.path(), &format!("own::w{writer}")).len(),
                rounds
            );
        }
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn the_oldest_files_go_beyond_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..FILES_KEPT + 2 {
            fs::write(dir.path().join(format!("s{i}.json")), "{}").unwrap();
        }
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1);
        for i in 0..2 {
            fs::File::options()
                .write(true)
                .open(dir.path().join(format!("s{i}.json")))
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
        prune(dir.path());
        assert!(!dir.path().join("s0.json").exists());
        assert!(!dir.path().join("s1.json").exists());
        assert!(dir.path().join("s2.json").exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), FILES_KEPT);
    }
}
