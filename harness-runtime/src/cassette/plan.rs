//! Which model a scenario talks to: scripted, live, record or replay.
//!
//! Scenarios without `cassette` ignore `LIVE_CASSETTE`: scripted, or live when they require
//! `OPENCODE_CONFIG_CONTENT`. A `cassette` scenario's plan follows `LIVE_CASSETTE` and whether
//! its cassette exists; which variables it then needs is the runner's part.

use std::path::{Path, PathBuf};

use super::command::{rerecord_command, shown};
use super::error::CassetteError;
use super::provenance::{Freshness, ThisRun, freshness, read_provenance, today};
use crate::model::ModelPlan;
use crate::scenario::ScenarioOptions;
use crate::settings::{self, CassetteMode};

/// The folder below the test crate that holds cassettes, beside `snapshots/`.
const DEFAULT_DIR: &str = "cassettes";

/// What `LIVE_CASSETTE` and `LIVE_CASSETTE_DIR` say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CassetteSettings {
    pub(crate) mode: CassetteMode,
    /// The cassette folder; relative to the test crate's root, `cassettes` when unset.
    pub(crate) dir: Option<PathBuf>,
}

impl CassetteSettings {
    /// The settings of this process's environment (an invalid value is the error naming it;
    /// the runner reported it before any trial).
    fn from_env() -> Result<Self, CassetteError> {
        let invalid = |error| CassetteError::Setting(Box::new(error));
        let mode = settings::cassette_mode().map_err(invalid)?;
        let dir = settings::cassette_dir().map_err(invalid)?;
        Ok(CassetteSettings { mode, dir })
    }
}

/// A scenario's plan and, for a `cassette` scenario, how it came about: its progress line and
/// the hint a skip gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Resolution {
    pub(crate) plan: ModelPlan,
    /// `None` for a scenario without `cassette`.
    cassette: Option<Cassette>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Cassette {
    mode: CassetteMode,
    /// Whether the file existed when the plan was made.
    found: bool,
    /// The file as the reader is shown it (see [`shown`]).
    shown: String,
    /// `<topic>::<fn>`, for the command that records it.
    scenario: String,
    /// For a replay: whether its provenance says it is stale (`None`: not read, or the file
    /// could not be; the replay names what is wrong with it).
    freshness: Option<Freshness>,
}

impl Resolution {
    /// Whether the scenario is marked `cassette` (its model variables follow the plan).
    pub(crate) fn is_cassette(&self) -> bool {
        self.cassette.is_some()
    }

    /// The one line a `cassette` scenario prints at its start: which model it talks to.
    pub(crate) fn progress_line(&self) -> Option<String> {
        let cassette = self.cassette.as_ref()?;
        let shown = &cassette.shown;
        Some(match &self.plan {
            ModelPlan::Replay { .. } => match self.freshness_note() {
                Some(note) => format!("model: replay {shown}, {note}"),
                None => format!("model: replay {shown}"),
            },
            ModelPlan::Record { .. } if cassette.mode == CassetteMode::Verify => {
                format!("model: verify {shown} against the real model (nothing is written)")
            }
            ModelPlan::Record { .. } => format!("model: record → {shown}"),
            ModelPlan::Live if cassette.mode == CassetteMode::Live => {
                format!("model: live ({}=live)", settings::CASSETTE)
            }
            ModelPlan::Live => format!("model: live (no cassette at {shown})"),
            ModelPlan::Scripted => unreachable!("a cassette scenario is never scripted"),
        })
    }

    /// Whether the scenario runs live to compare with its cassette (`LIVE_CASSETTE=verify`).
    pub(crate) fn is_verify(&self) -> bool {
        matches!(self.plan, ModelPlan::Record { .. })
            && self
                .cassette
                .as_ref()
                .is_some_and(|c| c.mode == CassetteMode::Verify)
    }

    /// What a replay's provenance says, for its progress line and the report: `stale: …` or
    /// that it is unknown; `None` when it is fresh.
    pub(crate) fn freshness_note(&self) -> Option<String> {
        match self.cassette.as_ref()?.freshness.as_ref()? {
            Freshness::Fresh => None,
            Freshness::Unknown => {
                Some("provenance unknown (recorded before cassettes kept it)".to_owned())
            }
            Freshness::Stale(reasons) => Some(format!("stale: {}", reasons.join("; "))),
        }
    }

    /// The failure of a stale replay under `LIVE_STRICT=1`: why it is stale and the command
    /// that records it again. An unknown provenance is not stale.
    pub(crate) fn stale_failure(&self) -> Option<String> {
        let cassette = self.cassette.as_ref()?;
        let Some(Freshness::Stale(reasons)) = &cassette.freshness else {
            return None;
        };
        Some(format!(
            "cassette {} is stale: {}; record it again with `{}` ({}=1 makes a stale cassette \
             a failure)",
            cassette.shown,
            reasons.join("; "),
            rerecord_command(&cassette.scenario),
            settings::STRICT
        ))
    }

    /// For a scenario that went live only because its cassette is missing (`LIVE_CASSETTE=auto`):
    /// where the cassette would be and how to record it, for the reason it is skipped.
    pub(crate) fn missing_cassette_hint(&self) -> Option<String> {
        let cassette = self.cassette.as_ref()?;
        (cassette.mode == CassetteMode::Auto && !cassette.found).then(|| {
            format!(
                "no cassette at {}; record one with `{}`",
                cassette.shown,
                rerecord_command(&cassette.scenario)
            )
        })
    }
}

/// The plan of the scenario `name` (`<topic>::<fn>`) of the crate at `manifest_dir`; an error
/// (`LIVE_CASSETTE=replay` without a cassette) fails the scenario with its message.
pub(crate) fn plan(
    options: &ScenarioOptions,
    name: &str,
    manifest_dir: &Path,
) -> Result<ModelPlan, CassetteError> {
    resolve(options, name, manifest_dir, CassetteSettings::from_env).map(|resolved| resolved.plan)
}

/// [`plan`] with how it came about, from this process's environment; a replay's provenance is
/// compared with `opencode_version` (the OpenCode that will run, when known), today and
/// `LIVE_CASSETTE_MAX_AGE`.
pub(crate) fn resolution(
    options: &ScenarioOptions,
    name: &str,
    manifest_dir: &Path,
    opencode_version: impl FnOnce() -> Option<String>,
) -> Result<Resolution, CassetteError> {
    let mut resolved = resolve(options, name, manifest_dir, CassetteSettings::from_env)?;
    if matches!(resolved.plan, ModelPlan::Replay { .. }) {
        let opencode = opencode_version();
        let today = today();
        let run = ThisRun {
            opencode: opencode.as_deref(),
            max_age: settings::cassette_max_age(),
            today: &today,
        };
        assess(&mut resolved, run);
    }
    Ok(resolved)
}

/// `resolved` (a replay) as if its provenance had been read and found `freshness`: for the
/// runner's tests, which decide on a resolution without a cassette file.
#[cfg(test)]
pub(crate) fn assessed_as(mut resolved: Resolution, freshness: Freshness) -> Resolution {
    if let Some(cassette) = &mut resolved.cassette {
        cassette.freshness = Some(freshness);
    }
    resolved
}

/// Reads a replay's provenance and says whether it is stale for `run`.
fn assess(resolved: &mut Resolution, run: ThisRun<'_>) {
    if let (ModelPlan::Replay { path }, Some(cassette)) = (&resolved.plan, &mut resolved.cassette) {
        cassette.freshness =
            read_provenance(path).map(|provenance| freshness(provenance.as_ref(), run));
    }
}

/// [`resolution`] with the settings given (read only for a `cassette` scenario); the file's
/// presence is looked up on disk.
pub(crate) fn resolve(
    options: &ScenarioOptions,
    name: &str,
    manifest_dir: &Path,
    settings: impl FnOnce() -> Result<CassetteSettings, CassetteError>,
) -> Result<Resolution, CassetteError> {
    if !options.cassette {
        let real = options.requires.contains(&settings::CONFIG_CONTENT);
        let plan = if real {
            ModelPlan::Live
        } else {
            ModelPlan::Scripted
        };
        return Ok(Resolution {
            plan,
            cassette: None,
        });
    }
    let settings = settings()?;
    let file = format!("{}.json", stem(name));
    let path = match &settings.dir {
        Some(dir) => manifest_dir.join(dir),
        None => manifest_dir.join(DEFAULT_DIR),
    }
    .join(&file);
    let shown = shown(&path, manifest_dir);
    // `try_exists`: a folder that cannot be read is an error to see, not a missing cassette.
    let found = path.try_exists().map_err(|source| CassetteError::Check {
        path: shown.clone(),
        source,
    })?;
    let plan = match settings.mode {
        CassetteMode::Auto if found => ModelPlan::Replay { path },
        CassetteMode::Auto | CassetteMode::Live => ModelPlan::Live,
        CassetteMode::Replay | CassetteMode::Missing if found => ModelPlan::Replay { path },
        // Verifying records into memory through the relay and compares at the end.
        CassetteMode::Verify if found => ModelPlan::Record { path },
        CassetteMode::Replay | CassetteMode::Verify => {
            return Err(CassetteError::Missing {
                mode: settings.mode.value(),
                path: shown,
                command: rerecord_command(name),
            });
        }
        CassetteMode::Record | CassetteMode::Missing => ModelPlan::Record { path },
    };
    Ok(Resolution {
        plan,
        cassette: Some(Cassette {
            mode: settings.mode,
            found,
            shown,
            scenario: name.to_string(),
            freshness: None,
        }),
    })
}

/// `<topic>::<fn>` → `<topic>__<fn>`: the snapshot's stem, so a cassette sits beside its
/// snapshot's name.
fn stem(scenario: &str) -> String {
    scenario.replace("::", "__")
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "probes::basic_turn";

    fn cassette_options() -> ScenarioOptions {
        ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        }
    }

    fn with(mode: CassetteMode) -> impl FnOnce() -> Result<CassetteSettings, CassetteError> {
        move || Ok(CassetteSettings { mode, dir: None })
    }

    /// A test crate with (or without) the scenario's cassette.
    fn crate_dir(with_cassette: bool) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if with_cassette {
            std::fs::create_dir(dir.path().join("cassettes")).unwrap();
            std::fs::write(dir.path().join("cassettes/probes__basic_turn.json"), "{}").unwrap();
        }
        dir
    }

    const MODES: [CassetteMode; 6] = [
        CassetteMode::Auto,
        CassetteMode::Replay,
        CassetteMode::Record,
        CassetteMode::Live,
        CassetteMode::Verify,
        CassetteMode::Missing,
    ];

    #[test]
    fn every_mode_with_and_without_the_cassette() {
        for found in [true, false] {
            let dir = crate_dir(found);
            let path = dir.path().join("cassettes/probes__basic_turn.json");
            for mode in MODES {
                let resolved = resolve(&cassette_options(), NAME, dir.path(), with(mode));
                let expected = match (mode, found) {
                    (CassetteMode::Auto | CassetteMode::Replay | CassetteMode::Missing, true) => {
                        Ok(ModelPlan::Replay { path: path.clone() })
                    }
                    (CassetteMode::Auto | CassetteMode::Live, _) => Ok(ModelPlan::Live),
                    (CassetteMode::Record, _)
                    | (CassetteMode::Missing, false)
                    | (CassetteMode::Verify, true) => Ok(ModelPlan::Record { path: path.clone() }),
                    (CassetteMode::Replay | CassetteMode::Verify, false) => Err(()),
                };
                assert_eq!(
                    resolved.as_ref().map(|r| r.plan.clone()).map_err(|_| ()),
                    expected,
                    "{mode:?}, cassette found: {found}: {resolved:?}"
                );
            }
        }
    }

    #[test]
    fn replay_without_a_cassette_says_where_and_how_to_record() {
        let dir = crate_dir(false);
        let error = resolve(
            &cassette_options(),
            NAME,
            dir.path(),
            with(CassetteMode::Replay),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "LIVE_CASSETTE=replay, but there is no cassette at \
                 cassettes/probes__basic_turn.json: record one with \
                 `LIVE_CASSETTE=record cargo test --test "
            ),
            "{error}"
        );
        assert!(
            error.contains(" -- probes::basic_turn --exact`, or unset LIVE_CASSETTE"),
            "{error}"
        );
        assert!(!error.contains(&*dir.path().to_string_lossy()), "{error}");
    }

    #[test]
    fn verify_without_a_cassette_says_so() {
        let dir = crate_dir(false);
        let error = resolve(
            &cassette_options(),
            NAME,
            dir.path(),
            with(CassetteMode::Verify),
        )
        .unwrap_err()
        .to_string();
        assert!(
            error.starts_with(
                "LIVE_CASSETTE=verify, but there is no cassette at \
                 cassettes/probes__basic_turn.json: record one with `"
            ),
            "{error}"
        );
    }

    /// The replay of a cassette with the provenance `provenance` (JSON), assessed against
    /// OpenCode 1.18.33 on 2026-12-02 with a maximum age of 30 days.
    fn assessed(provenance: Option<serde_json::Value>) -> Resolution {
        let dir = crate_dir(true);
        let mut file = serde_json::json!({"format": 1});
        if let Some(provenance) = provenance {
            file["provenance"] = provenance;
        }
        let path = dir.path().join("cassettes/probes__basic_turn.json");
        std::fs::write(&path, file.to_string()).unwrap();
        let mut resolved = resolve(
            &cassette_options(),
            NAME,
            dir.path(),
            with(CassetteMode::Auto),
        )
        .unwrap();
        let run = ThisRun {
            opencode: Some("1.18.33"),
            max_age: Some(std::time::Duration::from_secs(30 * 24 * 3600)),
            today: "2026-12-02",
        };
        assess(&mut resolved, run);
        resolved
    }

    fn recorded(opencode: &str, date: &str) -> serde_json::Value {
        serde_json::json!({
            "opencode": opencode, "model": "m", "upstream_models": [], "date": date,
            "harness": "0.1.0", "verdict": {"outcome": "passed"}
        })
    }

    #[test]
    fn a_stale_replay_says_why_and_fails_only_when_strict_asks() {
        let fresh = assessed(Some(recorded("1.18.33", "2026-11-30")));
        assert_eq!(
            fresh.progress_line().unwrap(),
            "model: replay cassettes/probes__basic_turn.json"
        );
        assert_eq!(
            (fresh.freshness_note(), fresh.stale_failure()),
            (None, None)
        );

        let stale = assessed(Some(recorded("1.17.0", "2026-11-30")));
        assert_eq!(
            stale.progress_line().unwrap(),
            "model: replay cassettes/probes__basic_turn.json, stale: recorded with OpenCode \
             1.17.0, this is 1.18.33"
        );
        let failure = stale.stale_failure().unwrap();
        assert!(
            failure.starts_with(
                "cassette cassettes/probes__basic_turn.json is stale: recorded with OpenCode \
                 1.17.0, this is 1.18.33; record it again with `LIVE_CASSETTE=record cargo test \
                 --test "
            ),
            "{failure}"
        );
        assert!(
            failure.ends_with(
                " -- probes::basic_turn --exact` (LIVE_STRICT=1 makes a stale cassette a failure)"
            ),
            "{failure}"
        );

        let old = assessed(Some(recorded("1.18.33", "2026-01-02")));
        assert_eq!(
            old.freshness_note().unwrap(),
            "stale: recorded on 2026-01-02, 334 days ago, past LIVE_CASSETTE_MAX_AGE=30days"
        );
    }

    #[test]
    fn a_replay_without_provenance_says_it_is_unknown_and_never_fails_for_it() {
        let unknown = assessed(None);
        assert_eq!(
            unknown.progress_line().unwrap(),
            "model: replay cassettes/probes__basic_turn.json, provenance unknown (recorded \
             before cassettes kept it)"
        );
        assert_eq!(unknown.stale_failure(), None);
    }

    #[test]
    fn verify_says_it_writes_nothing_and_missing_records_like_record() {
        let dir = crate_dir(true);
        let verify = resolve(
            &cassette_options(),
            NAME,
            dir.path(),
            with(CassetteMode::Verify),
        )
        .unwrap();
        assert!(verify.is_verify());
        assert_eq!(
            verify.progress_line().unwrap(),
            "model: verify cassettes/probes__basic_turn.json against the real model (nothing \
             is written)"
        );
        let empty = crate_dir(false);
        let missing = resolve(
            &cassette_options(),
            NAME,
            empty.path(),
            with(CassetteMode::Missing),
        )
        .unwrap();
        assert!(!missing.is_verify());
        assert_eq!(
            missing.progress_line().unwrap(),
            "model: record → cassettes/probes__basic_turn.json"
        );
    }

    #[test]
    fn a_pending_recording_is_not_a_cassette() {
        let dir = crate_dir(false);
        std::fs::create_dir(dir.path().join("cassettes")).unwrap();
        std::fs::write(
            dir.path().join("cassettes/probes__basic_turn.json.pending"),
            "{}",
        )
        .unwrap();
        let resolved = resolve(
            &cassette_options(),
            NAME,
            dir.path(),
            with(CassetteMode::Auto),
        );
        assert_eq!(resolved.unwrap().plan, ModelPlan::Live);
    }

    #[test]
    fn progress_lines_name_the_mode_and_the_file() {
        let line = |found: bool, mode: CassetteMode| {
            let dir = crate_dir(found);
            resolve(&cassette_options(), NAME, dir.path(), with(mode))
                .unwrap()
                .progress_line()
                .unwrap()
        };
        assert_eq!(
            line(true, CassetteMode::Auto),
            "model: replay cassettes/probes__basic_turn.json"
        );
        assert_eq!(
            line(true, CassetteMode::Replay),
            "model: replay cassettes/probes__basic_turn.json"
        );
        assert_eq!(
            line(true, CassetteMode::Record),
            "model: record → cassettes/probes__basic_turn.json"
        );
        assert_eq!(
            line(true, CassetteMode::Live),
            "model: live (LIVE_CASSETTE=live)"
        );
        assert_eq!(
            line(false, CassetteMode::Auto),
            "model: live (no cassette at cassettes/probes__basic_turn.json)"
        );
    }

    #[test]
    fn only_auto_without_a_cassette_hints_at_recording() {
        for found in [true, false] {
            let dir = crate_dir(found);
            for mode in MODES {
                let Ok(resolved) = resolve(&cassette_options(), NAME, dir.path(), with(mode))
                else {
                    continue;
                };
                let hint = resolved.missing_cassette_hint();
                if mode == CassetteMode::Auto && !found {
                    let hint = hint.unwrap();
                    assert!(
                        hint.starts_with(
                            "no cassette at cassettes/probes__basic_turn.json; record one with \
                             `LIVE_CASSETTE=record cargo test --test "
                        ),
                        "{hint}"
                    );
                    assert!(hint.ends_with(" -- probes::basic_turn --exact`"), "{hint}");
                } else {
                    assert_eq!(hint, None, "{mode:?}, found: {found}");
                }
            }
        }
    }

    #[test]
    fn scenarios_without_cassette_ignore_the_settings() {
        let dir = crate_dir(true);
        let read = || -> Result<CassetteSettings, CassetteError> {
            panic!("the settings of a scenario without `cassette` were read")
        };
        let scripted = resolve(&ScenarioOptions::DEFAULT, NAME, dir.path(), read).unwrap();
        assert_eq!(scripted.plan, ModelPlan::Scripted);
        assert!(!scripted.is_cassette());
        assert_eq!(scripted.progress_line(), None);
        assert_eq!(scripted.missing_cassette_hint(), None);
        let real = ScenarioOptions {
            requires: &["TEST_OLLAMA_MODEL", "OPENCODE_CONFIG_CONTENT"],
            ..ScenarioOptions::DEFAULT
        };
        let live = resolve(&real, NAME, dir.path(), read).unwrap();
        assert_eq!(live.plan, ModelPlan::Live);
        assert_eq!(live.progress_line(), None);
    }

    #[test]
    fn an_invalid_setting_is_the_error() {
        let dir = crate_dir(true);
        let error = resolve(&cassette_options(), NAME, dir.path(), || {
            Err(CassetteError::Setting("LIVE_CASSETTE must be …".into()))
        })
        .unwrap_err();
        assert_eq!(error.to_string(), "LIVE_CASSETTE must be …");
    }

    #[test]
    fn the_cassette_dir_moves_the_file_and_shows_as_the_variable_outside_the_crate() {
        let dir = crate_dir(false);
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("probes__basic_turn.json"), "{}").unwrap();
        let settings = CassetteSettings {
            mode: CassetteMode::Auto,
            dir: Some(elsewhere.path().to_path_buf()),
        };
        let resolved = resolve(&cassette_options(), NAME, dir.path(), || Ok(settings)).unwrap();
        assert_eq!(
            resolved.plan,
            ModelPlan::Replay {
                path: elsewhere.path().join("probes__basic_turn.json")
            }
        );
        assert_eq!(
            resolved.progress_line().unwrap(),
            "model: replay $LIVE_CASSETTE_DIR/probes__basic_turn.json"
        );
        // A relative folder is taken from the test crate's root, and shown relative to it.
        let settings = CassetteSettings {
            mode: CassetteMode::Record,
            dir: Some("recorded/here".into()),
        };
        let resolved = resolve(&cassette_options(), NAME, dir.path(), || Ok(settings)).unwrap();
        assert_eq!(
            resolved.plan,
            ModelPlan::Record {
                path: dir.path().join("recorded/here/probes__basic_turn.json")
            }
        );
        assert_eq!(
            resolved.progress_line().unwrap(),
            "model: record → recorded/here/probes__basic_turn.json"
        );
    }

    /// As `evidence`'s snapshot stem: `snapshots/probes__basic_turn.snap` beside
    /// `cassettes/probes__basic_turn.json`.
    #[test]
    fn the_stem_is_the_snapshots() {
        assert_eq!(stem("probes::basic_turn"), "probes__basic_turn");
        assert_eq!(stem("a::b::c"), "a__b__c");
        assert_eq!(stem("top"), "top");
    }
}
