//! What a run measures and how many samples it takes: arguments and `LIVE_BENCH_*` variables.

/// `LIVE_BENCH_SAMPLES=n`: the base sample count (default 5, `--quick` 1).
pub const SAMPLES_ENV: &str = "LIVE_BENCH_SAMPLES";
/// `LIVE_BENCH_QUICK=1`: the same as `--quick`.
pub const QUICK_ENV: &str = "LIVE_BENCH_QUICK";
/// `LIVE_BENCH_ONLY=turn,model`: measure only these sections (as `--only`).
pub const ONLY_ENV: &str = "LIVE_BENCH_ONLY";
/// `LIVE_BENCH_SUITE_FILTER=turns::`: the live suite's filter for the suite figures (default: the
/// whole suite, as the figures are about the suite; `--quick` runs one scenario, and a few for
/// `nextest`).
pub const SUITE_FILTER_ENV: &str = "LIVE_BENCH_SUITE_FILTER";
/// `--quick`'s filter for `nextest`: a few one-turn scenarios made to share a server, so a run
/// of them shows whether nextest's processes share one.
const QUICK_NEXTEST_FILTER: &str = "isolation::cross_talk_";

/// The sections, in the order they run.
pub const SECTIONS: [&str; 13] = [
    "model",
    "fixture",
    "turn",
    "forwarded_turn",
    "explored_schedule",
    "relayed_turn",
    "replay_turn",
    "provisioning",
    "acp_turn",
    "scenario_cpu",
    "suite",
    "nextest",
    "report",
];

/// Why the command line or the environment does not say what to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsError {
    /// `LIVE_BENCH_SAMPLES` is not a positive whole number.
    Samples,
    /// `--only` or `LIVE_BENCH_ONLY` names a section that does not exist.
    UnknownSection(String),
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Samples => {
                write!(f, "{SAMPLES_ENV} must be a positive whole number, e.g. 5")
            }
            SettingsError::UnknownSection(name) => write!(
                f,
                "unknown section `{name}` in --only / {ONLY_ENV}: expected some of {}",
                SECTIONS.join(", ")
            ),
        }
    }
}

impl std::error::Error for SettingsError {}

/// The run's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Started without `--bench`, i.e. by `cargo test`: a smoke run.
    pub as_test: bool,
    pub quick: bool,
    /// The base sample count `n`: provisioning takes n per side, fixture starts 2n, turns 4n
    /// per side, model requests 10n; the suite runs once per mode (twice when n >= 8).
    pub samples: usize,
    pub only: Vec<String>,
    pub suite_filter: String,
    /// The filter of the `nextest` section's runs: the suite filter, or with `--quick` and no
    /// filter set, a few scenarios ([`QUICK_NEXTEST_FILTER`]).
    pub nextest_filter: String,
}

impl Settings {
    /// From the command line (`cargo bench --bench live_overhead -- --quick --only turn`) and
    /// the environment. Unknown arguments are ignored.
    ///
    /// `cargo bench` passes `--bench`; without it the binary was started by `cargo test
    /// --benches` (or `--all-targets`), which only checks that it still runs: then it is a quick
    /// run of the cheap sections, unless sections were chosen explicitly.
    pub fn from_env() -> Result<Settings, SettingsError> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let as_test = !args.iter().any(|a| a == "--bench");
        let quick = as_test
            || args.iter().any(|a| a == "--quick")
            || matches!(
                std::env::var(QUICK_ENV).as_deref(),
                Ok("1" | "true" | "yes")
            );
        let samples = match std::env::var(SAMPLES_ENV) {
            Ok(raw) => match raw.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => return Err(SettingsError::Samples),
            },
            Err(_) if quick => 1,
            Err(_) => 5,
        };
        let only_arg = args
            .iter()
            .position(|a| a == "--only")
            .and_then(|i| args.get(i + 1).cloned());
        let only: Vec<String> = only_arg
            .or_else(|| std::env::var(ONLY_ENV).ok())
            .or_else(|| as_test.then(|| "model,fixture".to_string()))
            .unwrap_or_default()
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if let Some(unknown) = only.iter().find(|s| !SECTIONS.contains(&s.as_str())) {
            return Err(SettingsError::UnknownSection(unknown.clone()));
        }
        let set_filter = std::env::var(SUITE_FILTER_ENV).ok();
        let default_filter = |quick_filter: &str| {
            set_filter.clone().unwrap_or_else(|| {
                if quick {
                    quick_filter.into()
                } else {
                    String::new()
                }
            })
        };
        Ok(Settings {
            as_test,
            quick,
            samples,
            only,
            suite_filter: default_filter("turns::plain_text_reply"),
            nextest_filter: default_filter(QUICK_NEXTEST_FILTER),
        })
    }

    /// Whether `section` runs.
    pub fn runs(&self, section: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|s| s == section)
    }

    /// Provisioning pairs: OpenCode's own start varies from 2.0 to 3.3 s on 2 cores (the
    /// harness adds under 1 ms before the spawn and one health poll after the line), so a median
    /// of 5 moved the ratio by ±0.08 between runs. `--quick`: one.
    pub fn provisioning_pairs(&self) -> usize {
        self.pairs(4)
    }

    /// Turn pairs (`turn`, `forwarded_turn` and `replay_turn`): a turn varies by ±60 ms around
    /// 250 ms. `--quick`: one.
    pub fn turn_pairs(&self) -> usize {
        self.pairs(12)
    }

    /// `per_sample` pairs per base sample; `--quick` (one sample per side, as documented): one.
    /// A quick run says every section still runs (CI's use); its figures are indicative only.
    fn pairs(&self, per_sample: usize) -> usize {
        if self.quick {
            1
        } else {
            self.samples * per_sample
        }
    }

    /// Pairs of `explored_schedule`: an explored turn waits for quiet at each of its some twenty
    /// held steps (about a second at the default 30 ms), so fewer pairs than a plain turn's.
    pub fn explored_pairs(&self) -> usize {
        self.pairs(4)
    }

    /// How many times the suite runs per server and shared (interleaved): whole-suite wall
    /// times vary by ±10 % from run to run on 2 cores, so one run a side is noise; 3 at the
    /// default sample count, `n / 2` above 6. `--quick`: one.
    pub fn suite_runs(&self) -> usize {
        if self.quick {
            1
        } else {
            (self.samples / 2).max(3)
        }
    }

    /// How many pairs of runs `nextest` takes (cargo test, nextest, nextest, cargo test…): 2 at
    /// the default sample count, `n / 4` above 11; `--quick`: one.
    pub fn nextest_pairs(&self) -> usize {
        if self.quick {
            1
        } else {
            (self.samples / 4).max(2)
        }
    }

    /// `scenario_cpu`: rounds per side and one-turn scenarios per round (each round's figure is
    /// its servers' CPU over its scenarios).
    pub fn cpu_rounds(&self) -> (usize, usize) {
        if self.quick {
            (1, 2)
        } else {
            (self.samples.clamp(3, 5), 4)
        }
    }
}
