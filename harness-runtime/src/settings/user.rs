//! The user's settings, the README's environment table: each read through the one rule, and all
//! checked together by the runner before any trial ([`check_all`]).

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use super::names;
use super::rule::{FLAG_VALUES, InvalidSetting, Problem, Setting, flag, parse_with, path, raw};

/// How much a scenario's agent is isolated from other scenarios' (`isolation = "…"`, or
/// `LIVE_ISOLATION` for scenarios that do not say).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isolation {
    /// One `opencode serve` of its own per agent: nothing is shared, not even the process.
    Server,
    /// The default: a server shared with other scenarios, up to eight at once, each in its own
    /// directory and OpenCode project with its own sessions, events, asks, files and config.
    /// Gives up only what one process shares (see the README); what needs more falls back to
    /// a server of its own by itself.
    Shared,
}

/// How a `cassette` scenario gets its model (`LIVE_CASSETTE`); other scenarios ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CassetteMode {
    /// Replay the cassette when it exists, else the real model (the default).
    Auto,
    /// Replay the cassette; a missing one fails the scenario.
    Replay,
    /// Record a new cassette from the real model.
    Record,
    /// The real model, whether a cassette exists or not; nothing is recorded.
    Live,
    /// The real model through the relay, recorded in memory and compared with the cassette
    /// (verdict and structure); nothing is written.
    Verify,
    /// Replay the cassette when it exists, else record it.
    Missing,
}

impl CassetteMode {
    /// The variable's value for this mode.
    pub(crate) const fn value(self) -> &'static str {
        match self {
            CassetteMode::Auto => "auto",
            CassetteMode::Replay => "replay",
            CassetteMode::Record => "record",
            CassetteMode::Live => "live",
            CassetteMode::Verify => "verify",
            CassetteMode::Missing => "missing",
        }
    }
}

const TIMEOUT_SCALE: Setting<f64> = Setting {
    name: names::TIMEOUT_SCALE,
    expected: "a positive number such as 2 or 1.5",
    parse: |text| {
        text.parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
    },
};

const ISOLATION: Setting<Isolation> = Setting {
    name: names::ISOLATION,
    expected: "`shared` (the default) or `server`",
    parse: |text| match text {
        "server" => Some(Isolation::Server),
        "shared" => Some(Isolation::Shared),
        _ => None,
    },
};

const STRICT: Setting<bool> = Setting {
    name: names::STRICT,
    expected: FLAG_VALUES,
    parse: flag,
};

/// `LIVE_NEXTEST_SKIP`: `true` for `fail`.
const NEXTEST_SKIP: Setting<bool> = Setting {
    name: names::NEXTEST_SKIP,
    expected: "`pass` (the default: a run-time skip exits 0, which nextest counts as passed) or \
               `fail`",
    parse: |text| match text {
        "pass" => Some(false),
        "fail" => Some(true),
        _ => None,
    },
};

const KEEP: Setting<bool> = Setting {
    name: names::KEEP,
    expected: FLAG_VALUES,
    parse: flag,
};

const SANDBOX: Setting<bool> = Setting {
    name: names::SANDBOX,
    expected: FLAG_VALUES,
    parse: flag,
};

const OPENCODE_BIN: Setting<PathBuf> = Setting {
    name: names::OPENCODE_BIN,
    expected: "the path of the opencode executable",
    parse: path,
};

const FIXTURE_BIN: Setting<PathBuf> = Setting {
    name: names::FIXTURE_BIN,
    expected: "the path of an executable that runs the fixture agent",
    parse: path,
};

const SNAPSHOT_DIR: Setting<PathBuf> = Setting {
    name: names::SNAPSHOT_DIR,
    expected: "a directory such as `snapshots` (a relative one is taken from the test crate's root)",
    parse: path,
};

const CASSETTE: Setting<CassetteMode> = Setting {
    name: names::CASSETTE,
    expected: "`auto` (the default), `replay`, `record`, `live`, `verify` or `missing`",
    parse: |text| {
        [
            CassetteMode::Auto,
            CassetteMode::Replay,
            CassetteMode::Record,
            CassetteMode::Live,
            CassetteMode::Verify,
            CassetteMode::Missing,
        ]
        .into_iter()
        .find(|mode| mode.value() == text)
    },
};

const CASSETTE_DIR: Setting<PathBuf> = Setting {
    name: names::CASSETTE_DIR,
    expected: "a directory such as `cassettes` (a relative one is taken from the test crate's root)",
    parse: path,
};

/// The shortest `LIVE_CASSETTE_MAX_AGE`: a cassette's date is a day, so is its age.
const MIN_CASSETTE_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

const CASSETTE_MAX_AGE: Setting<Duration> = Setting {
    name: names::CASSETTE_MAX_AGE,
    expected: "a duration of at least one day, such as 30d or 12weeks",
    parse: |text| {
        humantime::parse_duration(text)
            .ok()
            .filter(|age| *age >= MIN_CASSETTE_MAX_AGE)
    },
};

/// Where the run report goes (`LIVE_REPORT`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ReportPlace {
    /// `off` (or `0`, `false`, `no`): no report.
    Off,
    /// This folder (a relative one is taken from the working directory).
    Dir(PathBuf),
}

const REPORT: Setting<ReportPlace> = Setting {
    name: names::REPORT,
    expected: "a directory for the run report, or `off`",
    parse: |text| match text {
        "off" | "0" | "false" | "no" => Some(ReportPlace::Off),
        _ => path(text).map(ReportPlace::Dir),
    },
};

/// Where each scenario's outcomes across runs are kept (`LIVE_HISTORY`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum HistoryPlace {
    /// `off` (or `0`, `false`, `no`): no history.
    Off,
    /// This folder (a relative one is taken from the working directory).
    Dir(PathBuf),
}

const HISTORY: Setting<HistoryPlace> = Setting {
    name: names::HISTORY,
    expected: "a directory for the history of outcomes, or `off`",
    parse: |text| match text {
        "off" | "0" | "false" | "no" => Some(HistoryPlace::Off),
        _ => path(text).map(HistoryPlace::Dir),
    },
};

/// What a flawed `LIVE_SCHEDULE` is told to be.
const SCHEDULE_EXPECTED: &str = "a schedule as a failing exploration prints it, such as `da2a.1>b7c1.1,caea.3>3566.2` or `fifo`";

/// `LIVE_SCHEDULE` from its value: a wrong one says at which character and entry it goes wrong.
/// `parse` is the schedule's grammar, which belongs to `explore`, below this layer.
fn read_schedule<S, E: std::fmt::Display>(
    raw: Option<&OsStr>,
    parse: fn(&str) -> Result<S, E>,
) -> Result<Option<S>, InvalidSetting> {
    parse_with(names::SCHEDULE, SCHEDULE_EXPECTED, raw, |text| {
        parse(text).map_err(|error| Problem::Reason {
            what: "a schedule",
            reason: error.to_string(),
        })
    })
}

const EXPLORE_SEED: Setting<u64> = Setting {
    name: names::EXPLORE_SEED,
    expected: "a whole number from 0 to 18446744073709551615, such as the seed an exploration \
               printed",
    // Digits only: `+7` would parse, and a seed is copied from a line the harness printed.
    parse: |text| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
    },
};

/// How long an exploring run must be quiet before a held step is released, unless
/// `LIVE_EXPLORE_QUIET` says otherwise; before `LIVE_TIMEOUT_SCALE`.
const DEFAULT_EXPLORE_QUIET: Duration = Duration::from_millis(30);

/// The shortest `LIVE_EXPLORE_QUIET`: below it, a step released before the system answered the
/// last one is a race of the harness, not of the product.
const MIN_EXPLORE_QUIET: Duration = Duration::from_millis(1);

/// The longest `LIVE_EXPLORE_QUIET`: every decision waits this long, so beyond it a run of a few
/// dozen decisions outlasts any budget.
const MAX_EXPLORE_QUIET: Duration = Duration::from_secs(10);

const EXPLORE_QUIET: Setting<Duration> = Setting {
    name: names::EXPLORE_QUIET,
    expected: "a duration from 1ms to 10s, such as 30ms (the default) or 100ms",
    parse: |text| {
        humantime::parse_duration(text)
            .ok()
            .filter(|quiet| (MIN_EXPLORE_QUIET..=MAX_EXPLORE_QUIET).contains(quiet))
    },
};

/// How many times a failing exploration replays its shrunk schedule, unless
/// `LIVE_EXPLORE_CONFIRM` says otherwise.
const DEFAULT_EXPLORE_CONFIRM: u32 = 2;

/// The most confirming replays: each is a full run of the body.
const MAX_EXPLORE_CONFIRM: u32 = 100;

const EXPLORE_CONFIRM: Setting<u32> = Setting {
    name: names::EXPLORE_CONFIRM,
    expected: "a whole number from 0 to 100, such as 2 (the default) or 0 for no replays",
    parse: |text| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
            .filter(|n| *n <= MAX_EXPLORE_CONFIRM)
    },
};

/// How many live-model scenarios run at once unless `LIVE_MODEL_CONCURRENCY` says otherwise: a
/// local model serves one request at a time.
const DEFAULT_MODEL_CONCURRENCY: usize = 1;

/// The most: beyond this a provider's rate limit, not the harness, decides.
const MAX_MODEL_CONCURRENCY: usize = 64;

const MODEL_CONCURRENCY: Setting<usize> = Setting {
    name: names::MODEL_CONCURRENCY,
    expected: "a whole number from 1 to 64, such as 1 (the default, for a local model) or 4",
    parse: |text| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
            .filter(|n| (1..=MAX_MODEL_CONCURRENCY).contains(n))
    },
};

const RUN_MAX_TOKENS: Setting<u64> = Setting {
    name: names::RUN_MAX_TOKENS,
    expected: "a whole number of tokens of at least 1, such as 200000",
    parse: |text| {
        text.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| text.parse().ok())
            .flatten()
            .filter(|n| *n >= 1)
    },
};

const RUN_MAX_COST: Setting<f64> = Setting {
    name: names::RUN_MAX_COST,
    expected: "a positive number in the currency of the model's configured prices, such as 0.5",
    parse: |text| {
        text.parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v > 0.0)
    },
};

/// Every user setting, checked before any trial: a mistake is reported at once, not when the
/// scenario that reads it runs (or, for a flag, never, running lax). `schedule` is the grammar of
/// `LIVE_SCHEDULE` ([`schedule`]).
pub(crate) fn check_all<S, E: std::fmt::Display>(
    schedule: fn(&str) -> Result<S, E>,
) -> Result<(), Vec<InvalidSetting>> {
    let problems: Vec<InvalidSetting> = [
        TIMEOUT_SCALE.read().err(),
        ISOLATION.read().err(),
        STRICT.read().err(),
        NEXTEST_SKIP.read().err(),
        KEEP.read().err(),
        SANDBOX.read().err(),
        OPENCODE_BIN.read().err(),
        FIXTURE_BIN.read().err(),
        SNAPSHOT_DIR.read().err(),
        CASSETTE.read().err(),
        CASSETTE_DIR.read().err(),
        CASSETTE_MAX_AGE.read().err(),
        REPORT.read().err(),
        HISTORY.read().err(),
        read_schedule(raw(names::SCHEDULE).as_deref(), schedule).err(),
        EXPLORE_SEED.read().err(),
        EXPLORE_QUIET.read().err(),
        EXPLORE_CONFIRM.read().err(),
        MODEL_CONCURRENCY.read().err(),
        RUN_MAX_TOKENS.read().err(),
        RUN_MAX_COST.read().err(),
    ]
    .into_iter()
    .flatten()
    .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The ceiling multiplier; 1.0 when unset.
pub(crate) fn timeout_scale() -> Result<f64, InvalidSetting> {
    Ok(TIMEOUT_SCALE.read()?.unwrap_or(1.0))
}

/// Scales a ceiling by `LIVE_TIMEOUT_SCALE` (an invalid value counts as 1; the runner reports it).
pub fn scaled(ceiling: Duration) -> Duration {
    ceiling.mul_f64(timeout_scale().unwrap_or(1.0))
}

/// The suite's isolation level: `LIVE_ISOLATION`, `Shared` when unset. An invalid value counts
/// as the default here: the runner reported it before any trial.
pub(crate) fn isolation() -> Isolation {
    ISOLATION.read().ok().flatten().unwrap_or(Isolation::Shared)
}

/// Whether `LIVE_STRICT` asks for failures instead of skips (an invalid value counts as off;
/// the runner reports it before any trial).
pub(crate) fn strict() -> bool {
    STRICT.read().ok().flatten().unwrap_or(false)
}

/// Whether `LIVE_NEXTEST_SKIP=fail` makes a run-time skip under nextest a failure (an invalid
/// value counts as `pass`; the runner reports it before any trial).
pub(crate) fn nextest_skip_fails() -> bool {
    NEXTEST_SKIP.read().ok().flatten().unwrap_or(false)
}

/// `LIVE_STRICT` as set: unset is `false`, an invalid value the error naming it.
pub(crate) fn strict_setting() -> Result<bool, InvalidSetting> {
    STRICT.read().map(|on| on.unwrap_or(false))
}

/// Whether `LIVE_KEEP` asks to keep every root (an invalid value counts as off; the runner
/// reports it before any trial).
pub(crate) fn keep_roots() -> bool {
    KEEP.read().ok().flatten().unwrap_or(false)
}

/// Whether `LIVE_SANDBOX` leaves the sandbox on (the default) or turns it off; an invalid value
/// is the error naming it.
pub(crate) fn sandbox_setting() -> Result<bool, InvalidSetting> {
    SANDBOX.read().map(|on| on.unwrap_or(true))
}

/// `LIVE_OPENCODE_BIN`, if set.
pub(crate) fn opencode_bin() -> Result<Option<PathBuf>, InvalidSetting> {
    OPENCODE_BIN.read()
}

/// `LIVE_FIXTURE_BIN`, if set.
pub(crate) fn fixture_bin() -> Result<Option<PathBuf>, InvalidSetting> {
    FIXTURE_BIN.read()
}

/// `LIVE_SNAPSHOT_DIR`, if set.
pub(crate) fn snapshot_dir() -> Result<Option<PathBuf>, InvalidSetting> {
    SNAPSHOT_DIR.read()
}

/// `LIVE_CASSETTE`; `Auto` when unset.
pub(crate) fn cassette_mode() -> Result<CassetteMode, InvalidSetting> {
    Ok(CASSETTE.read()?.unwrap_or(CassetteMode::Auto))
}

/// `LIVE_CASSETTE_DIR`, if set.
pub(crate) fn cassette_dir() -> Result<Option<PathBuf>, InvalidSetting> {
    CASSETTE_DIR.read()
}

/// `LIVE_CASSETTE_MAX_AGE`, if set (an invalid value counts as unset; the runner reported it
/// before any trial).
pub(crate) fn cassette_max_age() -> Option<Duration> {
    CASSETTE_MAX_AGE.read().ok().flatten()
}

/// `LIVE_REPORT`, if set.
pub(crate) fn report_place() -> Result<Option<ReportPlace>, InvalidSetting> {
    REPORT.read()
}

/// `LIVE_HISTORY`, if set.
pub(crate) fn history_place() -> Result<Option<HistoryPlace>, InvalidSetting> {
    HISTORY.read()
}

/// `LIVE_SCHEDULE`: the one schedule an exploring scenario replays instead of exploring, if set.
/// An invalid value counts as unset here: the runner reported it before any trial.
/// `parse` is its grammar (`Schedule::parse`).
pub(crate) fn schedule<S, E: std::fmt::Display>(parse: fn(&str) -> Result<S, E>) -> Option<S> {
    read_schedule(raw(names::SCHEDULE).as_deref(), parse)
        .ok()
        .flatten()
}

/// `LIVE_EXPLORE_SEED`: the base seed of the random search, if set (an invalid value counts as
/// unset; the runner reported it before any trial).
pub(crate) fn explore_seed() -> Option<u64> {
    EXPLORE_SEED.read().ok().flatten()
}

/// How long an exploring run must be quiet before the scheduler releases a held step:
/// `LIVE_EXPLORE_QUIET` or 30 ms, scaled by `LIVE_TIMEOUT_SCALE` (a slow machine answers later,
/// and releasing before it answered would order the harness's timing, not the product's). An
/// invalid value counts as the default; the runner reported it before any trial.
pub(crate) fn explore_quiet() -> Duration {
    scaled(
        EXPLORE_QUIET
            .read()
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_EXPLORE_QUIET),
    )
}

/// How many times a failing exploration replays its shrunk schedule: `LIVE_EXPLORE_CONFIRM` or
/// 2. An invalid value counts as the default; the runner reported it before any trial.
pub(crate) fn explore_confirm() -> u32 {
    EXPLORE_CONFIRM
        .read()
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_EXPLORE_CONFIRM)
}

/// `LIVE_RUN_MAX_TOKENS`, if set (an invalid value counts as unset; the runner reported it
/// before any trial).
pub(crate) fn run_max_tokens() -> Option<u64> {
    RUN_MAX_TOKENS.read().ok().flatten()
}

/// `LIVE_RUN_MAX_COST`, if set (an invalid value counts as unset; the runner reported it before
/// any trial).
pub(crate) fn run_max_cost() -> Option<f64> {
    RUN_MAX_COST.read().ok().flatten()
}

/// How many live-model scenarios run at once: `LIVE_MODEL_CONCURRENCY` or 1. An invalid value
/// counts as the default; the runner reported it before any trial.
pub(crate) fn model_concurrency() -> usize {
    MODEL_CONCURRENCY
        .read()
        .ok()
        .flatten()
        .unwrap_or(DEFAULT_MODEL_CONCURRENCY)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explore::Schedule;

    #[test]
    fn the_run_ceiling_takes_a_positive_whole_number_of_tokens_and_a_positive_cost() {
        assert_eq!(RUN_MAX_TOKENS.test_read("4000"), Ok(Some(4000)));
        assert_eq!(RUN_MAX_COST.test_read("0.5"), Ok(Some(0.5)));
        for bad in ["0", "-1", "4k", "1.5"] {
            assert_eq!(
                RUN_MAX_TOKENS.test_read(bad).unwrap_err(),
                "LIVE_RUN_MAX_TOKENS must be a whole number of tokens of at least 1, such as 200000",
                "{bad}"
            );
        }
        for bad in ["0", "-0.1", "NaN", "inf", "cheap"] {
            assert!(RUN_MAX_COST.test_read(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn valid_scales_parse_and_unset_is_none() {
        assert_eq!(TIMEOUT_SCALE.parse_raw(None), Ok(None));
        assert_eq!(TIMEOUT_SCALE.test_read("2"), Ok(Some(2.0)));
        assert_eq!(TIMEOUT_SCALE.test_read("1.5"), Ok(Some(1.5)));
    }

    #[test]
    fn each_bad_scale_says_what_is_wrong() {
        let message = |value: &str| TIMEOUT_SCALE.test_read(value).unwrap_err();
        assert!(message("").contains("LIVE_TIMEOUT_SCALE is empty"));
        assert!(message("  ").contains("LIVE_TIMEOUT_SCALE holds only whitespace"));
        assert!(message(" 2 ").contains("leading or trailing whitespace"));
        for bad in ["abc", "0", "-1", "inf", "NaN"] {
            assert_eq!(
                message(bad),
                "LIVE_TIMEOUT_SCALE must be a positive number such as 2 or 1.5",
                "{bad}"
            );
        }
    }

    /// Isolation follows the one rule: nothing trimmed, and an empty value is an error, not a level.
    #[test]
    fn a_nextest_skip_passes_or_fails() {
        assert_eq!(NEXTEST_SKIP.test_read("pass"), Ok(Some(false)));
        assert_eq!(NEXTEST_SKIP.test_read("fail"), Ok(Some(true)));
        assert_eq!(
            NEXTEST_SKIP.test_read("1").unwrap_err(),
            "LIVE_NEXTEST_SKIP must be `pass` (the default: a run-time skip exits 0, which \
             nextest counts as passed) or `fail`"
        );
    }

    #[test]
    fn isolation_is_server_or_shared_unpadded() {
        assert_eq!(ISOLATION.test_read("server"), Ok(Some(Isolation::Server)));
        assert_eq!(ISOLATION.test_read("shared"), Ok(Some(Isolation::Shared)));
        assert_eq!(
            ISOLATION.test_read("process").unwrap_err(),
            "LIVE_ISOLATION must be `shared` (the default) or `server`"
        );
        assert!(
            ISOLATION
                .test_read("shared\n")
                .unwrap_err()
                .contains("LIVE_ISOLATION has leading or trailing whitespace")
        );
        assert!(
            ISOLATION
                .test_read("")
                .unwrap_err()
                .contains("LIVE_ISOLATION is empty")
        );
    }

    /// A flag is untrimmed and takes only its six words: `LIVE_STRICT=on` is an error, not "off"
    /// (which would run lax).
    #[test]
    fn flags_refuse_padding_and_unknown_words() {
        for setting in [&STRICT, &KEEP, &SANDBOX] {
            assert_eq!(setting.test_read("yes"), Ok(Some(true)));
            assert_eq!(setting.test_read("0"), Ok(Some(false)));
            let name = setting.name;
            assert_eq!(
                setting.test_read("on").unwrap_err(),
                format!("{name} must be 1, true or yes (on), or 0, false or no (off)")
            );
            assert!(
                setting
                    .test_read(" 1")
                    .unwrap_err()
                    .contains("has leading or trailing whitespace")
            );
        }
    }

    /// Path settings follow the rule too: an empty `LIVE_OPENCODE_BIN` is an error, not "unset".
    #[test]
    fn paths_refuse_empty_and_padded_values() {
        for setting in [&OPENCODE_BIN, &FIXTURE_BIN, &SNAPSHOT_DIR, &CASSETTE_DIR] {
            assert_eq!(
                setting.test_read("some/where"),
                Ok(Some(PathBuf::from("some/where")))
            );
            let name = setting.name;
            assert!(
                setting
                    .test_read("")
                    .unwrap_err()
                    .starts_with(&format!("{name} is empty: unset it, or set it to "))
            );
            assert!(
                setting
                    .test_read("/bin/x\n")
                    .unwrap_err()
                    .starts_with(&format!("{name} has leading or trailing whitespace"))
            );
        }
    }

    /// The sandbox is on unless the flag says off: unset is on, `0` off, a typo an error.
    #[test]
    fn the_sandbox_flag_defaults_to_on() {
        assert_eq!(SANDBOX.parse_raw(None), Ok(None));
        assert_eq!(SANDBOX.test_read("0"), Ok(Some(false)));
        assert_eq!(SANDBOX.test_read("1"), Ok(Some(true)));
        assert!(
            SANDBOX
                .test_read("off")
                .unwrap_err()
                .starts_with("LIVE_SANDBOX must be")
        );
    }

    #[test]
    fn cassette_modes_are_the_six_words_unpadded() {
        assert_eq!(CASSETTE.parse_raw(None), Ok(None));
        for mode in [
            CassetteMode::Auto,
            CassetteMode::Replay,
            CassetteMode::Record,
            CassetteMode::Live,
            CassetteMode::Verify,
            CassetteMode::Missing,
        ] {
            assert_eq!(CASSETTE.test_read(mode.value()), Ok(Some(mode)));
        }
        for other in ["Replay", "play", "1", "on"] {
            assert_eq!(
                CASSETTE.test_read(other).unwrap_err(),
                "LIVE_CASSETTE must be `auto` (the default), `replay`, `record`, `live`, \
                 `verify` or `missing`",
                "{other}"
            );
        }
        assert!(
            CASSETTE
                .test_read("record\n")
                .unwrap_err()
                .contains("LIVE_CASSETTE has leading or trailing whitespace")
        );
        assert!(
            CASSETTE
                .test_read("")
                .unwrap_err()
                .contains("LIVE_CASSETTE is empty")
        );
    }

    /// A cassette's age is counted in days: less than a day is refused, as is what is no
    /// duration.
    #[test]
    fn a_cassette_max_age_is_a_duration_of_a_day_or_more() {
        assert_eq!(CASSETTE_MAX_AGE.parse_raw(None), Ok(None));
        assert_eq!(
            CASSETTE_MAX_AGE.test_read("30d"),
            Ok(Some(Duration::from_secs(30 * 24 * 3600)))
        );
        assert_eq!(
            CASSETTE_MAX_AGE.test_read("2weeks"),
            Ok(Some(Duration::from_secs(14 * 24 * 3600)))
        );
        for bad in ["30", "12h", "0d", "thirty days", "-1d"] {
            assert_eq!(
                CASSETTE_MAX_AGE.test_read(bad).unwrap_err(),
                "LIVE_CASSETTE_MAX_AGE must be a duration of at least one day, such as 30d or \
                 12weeks",
                "{bad}"
            );
        }
    }

    fn schedule_of(value: &str) -> Result<Option<Schedule>, String> {
        read_schedule(Some(OsStr::new(value)), Schedule::parse).map_err(|e| e.to_string())
    }

    #[test]
    fn a_schedule_is_read_as_a_failing_exploration_prints_it() {
        assert_eq!(read_schedule(None, Schedule::parse), Ok(None));
        assert_eq!(
            schedule_of("da2a.1>b7c1.1,caea.3>3566.2")
                .unwrap()
                .unwrap()
                .to_string(),
            "da2a.1>b7c1.1,caea.3>3566.2"
        );
        assert!(schedule_of("fifo").unwrap().unwrap().is_fifo());
    }

    /// A wrong schedule names the character and the entry where it goes wrong, with the parser's
    /// own reason; a flawed text gets the one rule's message.
    #[test]
    fn a_wrong_schedule_says_where() {
        assert_eq!(
            schedule_of("da2a.1>b7c1.1,caea.3>zz.2").unwrap_err(),
            "LIVE_SCHEDULE is not a schedule: at character 22 (entry 2, \"caea.3>zz.2\"): `zz` \
             is not a tag: expected 4 hex digits; a schedule is `fifo` or deviations \
             `<tag>.<n>><tag>.<n>` (4 hex digits, a step number) joined by `,`, as a failing \
             exploration prints it"
        );
        assert!(
            schedule_of("da2a.1>b7c1.1,caea.0>3566.2")
                .unwrap_err()
                .contains("at character 15 (entry 2, \"caea.0>3566.2\"): `0` is not a step number")
        );
        assert_eq!(
            schedule_of("da2a.1>b7c1.1\n").unwrap_err(),
            "LIVE_SCHEDULE has leading or trailing whitespace: set it to a schedule as a failing \
             exploration prints it, such as `da2a.1>b7c1.1,caea.3>3566.2` or `fifo`, nothing around it"
        );
        assert!(
            schedule_of("")
                .unwrap_err()
                .starts_with("LIVE_SCHEDULE is empty: unset it, or set it to a schedule")
        );
    }

    #[test]
    fn a_seed_is_a_u64_in_decimal() {
        assert_eq!(EXPLORE_SEED.parse_raw(None), Ok(None));
        assert_eq!(EXPLORE_SEED.test_read("0"), Ok(Some(0)));
        assert_eq!(EXPLORE_SEED.test_read("1234"), Ok(Some(1234)));
        assert_eq!(
            EXPLORE_SEED.test_read("18446744073709551615"),
            Ok(Some(u64::MAX))
        );
        for bad in [
            "18446744073709551616",
            "-1",
            "+7",
            "0x10",
            "1e3",
            "12 34",
            "seed",
        ] {
            assert_eq!(
                EXPLORE_SEED.test_read(bad).unwrap_err(),
                "LIVE_EXPLORE_SEED must be a whole number from 0 to 18446744073709551615, such \
                 as the seed an exploration printed",
                "{bad}"
            );
        }
        assert!(
            EXPLORE_SEED
                .test_read("7\n")
                .unwrap_err()
                .contains("LIVE_EXPLORE_SEED has leading or trailing whitespace")
        );
    }

    #[test]
    fn the_model_concurrency_is_a_whole_number_from_1_to_64() {
        assert_eq!(MODEL_CONCURRENCY.parse_raw(None), Ok(None));
        for (text, n) in [("1", 1), ("4", 4), ("64", MAX_MODEL_CONCURRENCY)] {
            assert_eq!(MODEL_CONCURRENCY.test_read(text), Ok(Some(n)), "{text}");
        }
        for bad in ["0", "65", "-1", "+2", "two", "1.5"] {
            assert_eq!(
                MODEL_CONCURRENCY.test_read(bad).unwrap_err(),
                "LIVE_MODEL_CONCURRENCY must be a whole number from 1 to 64, such as 1 (the \
                 default, for a local model) or 4",
                "{bad}"
            );
        }
        const { assert!(DEFAULT_MODEL_CONCURRENCY <= MAX_MODEL_CONCURRENCY) };
    }

    #[test]
    fn the_quiet_is_a_duration_from_1ms_to_10s() {
        assert_eq!(EXPLORE_QUIET.parse_raw(None), Ok(None));
        for (text, quiet) in [
            ("30ms", Duration::from_millis(30)),
            ("1ms", MIN_EXPLORE_QUIET),
            ("10s", MAX_EXPLORE_QUIET),
            ("1s 500ms", Duration::from_millis(1500)),
        ] {
            assert_eq!(EXPLORE_QUIET.test_read(text), Ok(Some(quiet)), "{text}");
        }
        for bad in ["0ms", "999us", "11s", "1m", "30", "fast", "-5ms"] {
            assert_eq!(
                EXPLORE_QUIET.test_read(bad).unwrap_err(),
                "LIVE_EXPLORE_QUIET must be a duration from 1ms to 10s, such as 30ms (the \
                 default) or 100ms",
                "{bad}"
            );
        }
        assert!(
            EXPLORE_QUIET
                .test_read(" 30ms")
                .unwrap_err()
                .contains("LIVE_EXPLORE_QUIET has leading or trailing whitespace")
        );
        assert!((MIN_EXPLORE_QUIET..=MAX_EXPLORE_QUIET).contains(&DEFAULT_EXPLORE_QUIET));
    }

    #[test]
    fn the_confirming_replays_are_a_count_from_0_to_100() {
        assert_eq!(EXPLORE_CONFIRM.parse_raw(None), Ok(None));
        for (text, n) in [("0", 0), ("2", 2), ("100", MAX_EXPLORE_CONFIRM)] {
            assert_eq!(EXPLORE_CONFIRM.test_read(text), Ok(Some(n)), "{text}");
        }
        for bad in ["101", "-1", "+2", "two", "1.5", "99999999999"] {
            assert_eq!(
                EXPLORE_CONFIRM.test_read(bad).unwrap_err(),
                "LIVE_EXPLORE_CONFIRM must be a whole number from 0 to 100, such as 2 (the \
                 default) or 0 for no replays",
                "{bad}"
            );
        }
        const { assert!(DEFAULT_EXPLORE_CONFIRM <= MAX_EXPLORE_CONFIRM) };
    }

    #[test]
    fn the_history_is_a_folder_or_off() {
        assert_eq!(HISTORY.parse_raw(None), Ok(None));
        assert_eq!(HISTORY.test_read("off"), Ok(Some(HistoryPlace::Off)));
        assert_eq!(
            HISTORY.test_read("ci-cache/history"),
            Ok(Some(HistoryPlace::Dir(PathBuf::from("ci-cache/history"))))
        );
        assert!(
            HISTORY
                .test_read("")
                .unwrap_err()
                .starts_with("LIVE_HISTORY is empty")
        );
    }

    #[test]
    fn the_report_is_a_folder_or_off() {
        assert_eq!(REPORT.parse_raw(None), Ok(None));
        assert_eq!(REPORT.test_read("off"), Ok(Some(ReportPlace::Off)));
        assert_eq!(
            REPORT.test_read("out/report"),
            Ok(Some(ReportPlace::Dir(PathBuf::from("out/report"))))
        );
        assert!(
            REPORT
                .test_read("")
                .unwrap_err()
                .starts_with("LIVE_REPORT is empty")
        );
    }
}
