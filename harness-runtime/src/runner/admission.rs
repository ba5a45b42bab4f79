//! Whether a scenario runs, is skipped or fails before its body: its requirements as its model
//! plan makes them. One decision for listing (`--list`, `--ignored`), warming and running, so
//! what nextest is told up front is what happens at run time.
//!
//! A `cassette` scenario needs the real-model variables (`TEST_OLLAMA_MODEL`,
//! `OPENCODE_CONFIG_CONTENT`) when it talks to the real model (live, record) and neither when it
//! replays; its other `requires` apply in every mode. Recording without them fails (it was asked
//! for); going live without them skips (fails under `LIVE_STRICT=1`), saying how to record when
//! the cassette is what was missing.

use std::ffi::OsString;
use std::fmt::Display;
use std::path::Path;

use super::descriptor::Scenario;
use crate::cassette::{self, ModelPlan, Resolution};
use crate::scenario::ScenarioOptions;
use crate::{requirements, settings};

/// The variables a `cassette` scenario's real model needs, implied by the flag.
const MODEL_VARS: [&str; 2] = [settings::MODEL, settings::CONFIG_CONTENT];

/// What the runner does with a scenario before its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Run it, with this model plan.
    Run(Resolution),
    /// Report it skipped with this reason (a missing requirement).
    Skip(String),
    /// Fail it with this message without running it.
    Fail(String),
}

/// The admission of `scenario` in this process's environment (`strict`: `LIVE_STRICT=1`).
pub(crate) fn admit(scenario: &Scenario, strict: bool) -> Admission {
    let manifest_dir = Path::new(scenario.manifest_dir);
    let resolved = cassette::resolution(&scenario.options, &scenario.name(), manifest_dir, || {
        crate::opencode::installed_version(manifest_dir)
    });
    decide(&scenario.options, resolved, strict, settings::raw)
}

/// The admission given the scenario's resolved plan (an error fails it with its message) and the
/// variables of `lookup`.
fn decide(
    options: &ScenarioOptions,
    resolved: Result<Resolution, impl Display>,
    strict: bool,
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Admission {
    let resolution = match resolved {
        Ok(resolution) => resolution,
        Err(error) => return Admission::Fail(error.to_string()),
    };
    // A stale cassette under LIVE_STRICT=1 fails before anything runs.
    if let Some(stale) = resolution.stale_failure().filter(|_| strict) {
        return Admission::Fail(stale);
    }
    let needed = needed(options, &resolution);
    let Err(unmet) = requirements::check_with(&needed, lookup) else {
        return Admission::Run(resolution);
    };
    let mut reason = requirements::describe(&unmet);
    let model_unmet = unmet.iter().any(|u| MODEL_VARS.contains(&u.var));
    if model_unmet && matches!(resolution.plan, ModelPlan::Record { .. }) {
        let (mode, does) = if resolution.is_verify() {
            ("verify", "runs")
        } else {
            ("record", "records")
        };
        return Admission::Fail(format!(
            "{reason} ({}={mode} {does} the real model, which needs them)",
            settings::CASSETTE
        ));
    }
    if let Some(hint) = resolution.missing_cassette_hint().filter(|_| model_unmet) {
        reason = format!("{reason}; {hint}");
    }
    if strict {
        Admission::Fail(format!(
            "{reason} (LIVE_STRICT=1 makes a missing requirement a failure)"
        ))
    } else {
        Admission::Skip(reason)
    }
}

/// The variables the scenario needs under its plan: its `requires`, for a `cassette` scenario
/// without the model's variables when it replays and with them otherwise.
fn needed(options: &ScenarioOptions, resolution: &Resolution) -> Vec<&'static str> {
    let mut needed: Vec<&'static str> = options.requires.to_vec();
    if !resolution.is_cassette() {
        return needed;
    }
    if matches!(resolution.plan, ModelPlan::Replay { .. }) {
        needed.retain(|var| !MODEL_VARS.contains(var));
    } else {
        for var in MODEL_VARS {
            if !needed.contains(&var) {
                needed.push(var);
            }
        }
    }
    needed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::{CassetteSettings, resolve};
    use crate::settings::CassetteMode;

    const NAME: &str = "probes::basic_turn";
    const CONFIG: &str = r#"{"provider":{}}"#;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |var| pairs.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone())
    }

    fn model_vars() -> Vec<(&'static str, &'static str)> {
        vec![
            ("TEST_OLLAMA_MODEL", "gemma3:270m"),
            ("OPENCODE_CONFIG_CONTENT", CONFIG),
        ]
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

    fn admission(
        options: &ScenarioOptions,
        dir: &Path,
        mode: CassetteMode,
        vars: &[(&str, &str)],
        strict: bool,
    ) -> Admission {
        let settings = move || Ok(CassetteSettings { mode, dir: None });
        let resolved = resolve(options, NAME, dir, settings);
        decide(options, resolved, strict, env(vars))
    }

    /// The outcome, without the texts: `run <plan>`, `skip` or `fail`.
    fn outcome(admission: &Admission) -> String {
        match admission {
            Admission::Run(resolution) => match &resolution.plan {
                ModelPlan::Scripted => "run scripted",
                ModelPlan::Live => "run live",
                ModelPlan::Record { .. } => "run record",
                ModelPlan::Replay { .. } => "run replay",
            }
            .to_string(),
            Admission::Skip(_) => "skip".into(),
            Admission::Fail(_) => "fail".into(),
        }
    }

    /// Every mode × cassette present or absent × model variables set or not × `LIVE_STRICT`.
    #[test]
    fn every_mode_cassette_variables_and_strictness() {
        use CassetteMode::*;
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        for found in [true, false] {
            let dir = crate_dir(found);
            for mode in [Auto, Replay, Record, Live, Verify, Missing] {
                for vars_set in [true, false] {
                    for strict in [false, true] {
                        let expected = match (mode, found, vars_set, strict) {
                            (Auto | Replay | Missing, true, _, _) => "run replay",
                            (Replay | Verify, false, _, _) => "fail",
                            // Verifying runs the real model through the relay, as recording.
                            (Record | Verify, _, true, _) | (Missing, false, true, _) => {
                                "run record"
                            }
                            (Record | Verify, _, false, _) | (Missing, false, false, _) => "fail",
                            (Auto | Live, false, true, _) | (Live, true, true, _) => "run live",
                            (Auto | Live, false, false, false) | (Live, true, false, false) => {
                                "skip"
                            }
                            (Auto | Live, false, false, true) | (Live, true, false, true) => "fail",
                        };
                        let vars = if vars_set { model_vars() } else { Vec::new() };
                        let got = admission(&options, dir.path(), mode, &vars, strict);
                        assert_eq!(
                            outcome(&got),
                            expected,
                            "{mode:?}, cassette found: {found}, variables set: {vars_set}, \
                             strict: {strict}: {got:?}"
                        );
                    }
                }
            }
        }
    }

    /// A stale replay runs (its progress line says why), and fails before its body under
    /// `LIVE_STRICT=1`; an unknown provenance runs either way.
    #[test]
    fn a_stale_cassette_fails_only_under_strict_and_an_unknown_one_never() {
        use crate::cassette::{Freshness, assessed_as};
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(true);
        let replay = || {
            let settings = || {
                Ok(CassetteSettings {
                    mode: CassetteMode::Auto,
                    dir: None,
                })
            };
            resolve(&options, NAME, dir.path(), settings).unwrap()
        };
        let stale = || {
            assessed_as(
                replay(),
                Freshness::Stale(vec![
                    "recorded with OpenCode 1.17.0, this is 1.18.33".into(),
                ]),
            )
        };
        assert_eq!(
            outcome(&decide(&options, Ok::<_, String>(stale()), false, env(&[]))),
            "run replay"
        );
        let Admission::Fail(message) = decide(&options, Ok::<_, String>(stale()), true, env(&[]))
        else {
            panic!("a stale cassette under LIVE_STRICT=1 did not fail");
        };
        assert!(
            message.starts_with(
                "cassette cassettes/probes__basic_turn.json is stale: recorded with OpenCode \
                 1.17.0, this is 1.18.33; record it again with `LIVE_CASSETTE=record"
            ),
            "{message}"
        );
        let unknown = assessed_as(replay(), Freshness::Unknown);
        assert_eq!(
            outcome(&decide(&options, Ok::<_, String>(unknown), true, env(&[]))),
            "run replay"
        );
    }

    #[test]
    fn verify_without_variables_fails_saying_it_runs_the_real_model() {
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(true);
        let Admission::Fail(message) =
            admission(&options, dir.path(), CassetteMode::Verify, &[], false)
        else {
            panic!("verifying without the model's variables did not fail");
        };
        assert!(
            message.ends_with("(LIVE_CASSETTE=verify runs the real model, which needs them)"),
            "{message}"
        );
    }

    #[test]
    fn auto_without_cassette_or_variables_skips_saying_how_to_record() {
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(false);
        let Admission::Skip(reason) =
            admission(&options, dir.path(), CassetteMode::Auto, &[], false)
        else {
            panic!("not skipped");
        };
        assert!(
            reason.starts_with(
                "requires TEST_OLLAMA_MODEL, OPENCODE_CONFIG_CONTENT: TEST_OLLAMA_MODEL is not \
                 set; OPENCODE_CONFIG_CONTENT is not set; set it to run this scenario; no \
                 cassette at cassettes/probes__basic_turn.json; record one with \
                 `LIVE_CASSETTE=record cargo test --test "
            ),
            "{reason}"
        );
        assert!(
            reason.ends_with(" -- probes::basic_turn --exact`"),
            "{reason}"
        );
        let Admission::Fail(message) =
            admission(&options, dir.path(), CassetteMode::Auto, &[], true)
        else {
            panic!("not failed under LIVE_STRICT");
        };
        assert!(
            message.starts_with(&reason)
                && message.ends_with("(LIVE_STRICT=1 makes a missing requirement a failure)"),
            "{message}"
        );
    }

    #[test]
    fn live_without_variables_skips_without_the_recording_hint() {
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(true);
        let got = admission(&options, dir.path(), CassetteMode::Live, &[], false);
        assert_eq!(
            got,
            Admission::Skip(
                "requires TEST_OLLAMA_MODEL, OPENCODE_CONFIG_CONTENT: TEST_OLLAMA_MODEL is not \
                 set; OPENCODE_CONFIG_CONTENT is not set; set it to run this scenario"
                    .into()
            )
        );
    }

    #[test]
    fn record_without_variables_fails_naming_them() {
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(false);
        let vars = [("OPENCODE_CONFIG_CONTENT", CONFIG)];
        let Admission::Fail(message) =
            admission(&options, dir.path(), CassetteMode::Record, &vars, false)
        else {
            panic!("recording without the model's variables did not fail");
        };
        assert_eq!(
            message,
            "requires TEST_OLLAMA_MODEL: TEST_OLLAMA_MODEL is not set; set it to run this \
             scenario (LIVE_CASSETTE=record records the real model, which needs them)"
        );
    }

    /// Replaying needs no model variable, even one the scenario lists; its other requirements
    /// apply in every mode, with the usual skip.
    #[test]
    fn replay_drops_only_the_model_variables() {
        let options = ScenarioOptions {
            cassette: true,
            requires: &[
                "SELFTEST_SCRATCH",
                "TEST_OLLAMA_MODEL",
                "OPENCODE_CONFIG_CONTENT",
            ],
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(true);
        let scratch = [("SELFTEST_SCRATCH", "/tmp/x")];
        let replay = admission(&options, dir.path(), CassetteMode::Auto, &scratch, false);
        assert_eq!(outcome(&replay), "run replay");
        assert_eq!(
            admission(&options, dir.path(), CassetteMode::Auto, &[], false),
            Admission::Skip(
                "requires SELFTEST_SCRATCH: SELFTEST_SCRATCH is not set; set it to run this \
                 scenario"
                    .into()
            )
        );
        // Recording with the model's variables but without the scenario's own is skipped.
        let skipped = admission(
            &options,
            dir.path(),
            CassetteMode::Record,
            &model_vars(),
            false,
        );
        assert_eq!(outcome(&skipped), "skip", "{skipped:?}");
        // Without its cassette but with the real model, only its own variable is missing: the
        // reason is the usual one, with no word about recording.
        let no_cassette = crate_dir(false);
        assert_eq!(
            admission(
                &options,
                no_cassette.path(),
                CassetteMode::Auto,
                &model_vars(),
                false
            ),
            Admission::Skip(
                "requires SELFTEST_SCRATCH: SELFTEST_SCRATCH is not set; set it to run this \
                 scenario"
                    .into()
            )
        );
        // Live lists the scenario's own variables first, then the implied ones, each once.
        let Admission::Skip(reason) = admission(
            &options,
            crate_dir(false).path(),
            CassetteMode::Auto,
            &[],
            false,
        ) else {
            panic!("not skipped");
        };
        assert!(
            reason.starts_with(
                "requires SELFTEST_SCRATCH, TEST_OLLAMA_MODEL, OPENCODE_CONFIG_CONTENT: "
            ),
            "{reason}"
        );
    }

    /// The model variables' values follow the requirement rule: an invalid config is no config.
    #[test]
    fn an_invalid_model_variable_counts_as_missing() {
        let options = ScenarioOptions {
            cassette: true,
            ..ScenarioOptions::DEFAULT
        };
        let dir = crate_dir(false);
        let vars = [
            ("TEST_OLLAMA_MODEL", "gemma3:270m"),
            ("OPENCODE_CONFIG_CONTENT", "[1]"),
        ];
        let got = admission(&options, dir.path(), CassetteMode::Auto, &vars, false);
        let Admission::Skip(reason) = got else {
            panic!("not skipped: {got:?}");
        };
        assert!(
            reason.contains("OPENCODE_CONFIG_CONTENT is not a JSON object"),
            "{reason}"
        );
        assert!(reason.contains("; no cassette at "), "{reason}");
    }

    /// Scenarios without `cassette` are decided as before cassettes existed, in every mode.
    #[test]
    fn scenarios_without_cassette_keep_their_requirements() {
        use CassetteMode::*;
        let dir = crate_dir(true);
        let token = ScenarioOptions {
            requires: &["HARNESS_SELFTEST_TOKEN"],
            ..ScenarioOptions::DEFAULT
        };
        let real = ScenarioOptions {
            requires: &["TEST_OLLAMA_MODEL", "OPENCODE_CONFIG_CONTENT"],
            ..ScenarioOptions::DEFAULT
        };
        for mode in [Auto, Replay, Record, Live] {
            assert_eq!(
                admission(&token, dir.path(), mode, &[], false),
                Admission::Skip(
                    "requires HARNESS_SELFTEST_TOKEN: HARNESS_SELFTEST_TOKEN is not set; set it \
                     to run this scenario"
                        .into()
                )
            );
            assert_eq!(
                admission(&token, dir.path(), mode, &[], true),
                Admission::Fail(
                    "requires HARNESS_SELFTEST_TOKEN: HARNESS_SELFTEST_TOKEN is not set; set it \
                     to run this scenario (LIVE_STRICT=1 makes a missing requirement a failure)"
                        .into()
                )
            );
            let present = [("HARNESS_SELFTEST_TOKEN", "present")];
            let run = admission(&token, dir.path(), mode, &present, false);
            assert_eq!(outcome(&run), "run scripted");
            assert_eq!(
                outcome(&admission(&real, dir.path(), mode, &model_vars(), false)),
                "run live"
            );
            assert_eq!(
                outcome(&admission(&real, dir.path(), mode, &[], false)),
                "skip"
            );
            assert_eq!(
                outcome(&admission(
                    &ScenarioOptions::DEFAULT,
                    dir.path(),
                    mode,
                    &[],
                    true
                )),
                "run scripted"
            );
        }
    }

    #[test]
    fn a_plan_error_fails_with_its_message() {
        let got = decide(
            &ScenarioOptions::DEFAULT,
            Err::<Resolution, _>("LIVE_CASSETTE=replay, but there is no cassette"),
            false,
            env(&[]),
        );
        assert_eq!(
            got,
            Admission::Fail("LIVE_CASSETTE=replay, but there is no cassette".into())
        );
    }
}
