//! The bench's figures: medians of samples, ratios of medians, and the lines they print as.
//!
//! Std only: `tests/bench_output.rs` includes this file to keep the printed format parseable.

use std::time::Duration;

/// The median of `samples` (the mean of the middle two for an even count); `None` when empty.
pub fn median(samples: &[Duration]) -> Option<Duration> {
    let mut sorted = samples.to_vec();
    sorted.sort();
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2),
    }
}

/// One printed figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// `ratio <name> <value>`: a dimensionless ratio of two medians measured in the same run.
    Ratio { name: String, value: f64 },
    /// `median <name> <ms> ms (<n> samples)`: the median a ratio (or a standalone figure) is
    /// built from.
    Median {
        name: String,
        ms: f64,
        samples: usize,
    },
    /// `peak <name> <mib> MiB (<n> runs)`: the largest of a memory reading over runs.
    Peak { name: String, mib: f64, runs: usize },
}

impl Figure {
    /// The median of `samples` as a figure; `None` when there are none.
    pub fn median(name: &str, samples: &[Duration]) -> Option<Figure> {
        median(samples).map(|m| Figure::Median {
            name: name.to_string(),
            ms: m.as_secs_f64() * 1000.0,
            samples: samples.len(),
        })
    }

    /// The largest of `bytes` (one reading per run) in MiB; `None` when there are none.
    pub fn peak(name: &str, bytes: &[u64]) -> Option<Figure> {
        let largest = *bytes.iter().max()?;
        Some(Figure::Peak {
            name: name.to_string(),
            mib: largest as f64 / (1024.0 * 1024.0),
            runs: bytes.len(),
        })
    }

    /// `numerator / denominator` of two medians; `None` when either side has no sample or the
    /// denominator is zero.
    pub fn ratio(name: &str, numerator: &[Duration], denominator: &[Duration]) -> Option<Figure> {
        let (n, d) = (median(numerator)?, median(denominator)?);
        (!d.is_zero()).then(|| Figure::Ratio {
            name: name.to_string(),
            value: n.as_secs_f64() / d.as_secs_f64(),
        })
    }

    /// The figure's one line.
    pub fn line(&self) -> String {
        match self {
            Figure::Ratio { name, value } => format!("ratio {name} {value:.3}"),
            Figure::Median { name, ms, samples } => {
                format!("median {name} {ms:.1} ms ({samples} samples)")
            }
            Figure::Peak { name, mib, runs } => format!("peak {name} {mib:.1} MiB ({runs} runs)"),
        }
    }

    /// Parses one line printed by [`Figure::line`]; `None` for any other line.
    pub fn parse(line: &str) -> Option<Figure> {
        let mut words = line.split_whitespace();
        match (words.next()?, words.next()?, words.next()?) {
            ("ratio", name, value) => Some(Figure::Ratio {
                name: name.to_string(),
                value: value.parse().ok()?,
            }),
            ("median", name, ms) => {
                let (unit, samples) = (words.next()?, words.next()?);
                if unit != "ms" {
                    return None;
                }
                Some(Figure::Median {
                    name: name.to_string(),
                    ms: ms.parse().ok()?,
                    samples: samples.strip_prefix('(')?.parse().ok()?,
                })
            }
            ("peak", name, mib) => {
                let (unit, runs) = (words.next()?, words.next()?);
                if unit != "MiB" {
                    return None;
                }
                Some(Figure::Peak {
                    name: name.to_string(),
                    mib: mib.parse().ok()?,
                    runs: runs.strip_prefix('(')?.parse().ok()?,
                })
            }
            _ => None,
        }
    }

    /// Every figure in `output`, in order.
    #[allow(dead_code)] // for readers of the output: tests/bench_output.rs
    pub fn parse_all(output: &str) -> Vec<Figure> {
        output.lines().filter_map(Figure::parse).collect()
    }
}

/// A ratio the bench prints: the section that measures it, and the target it should meet.
#[derive(Clone, Copy, Debug)]
pub struct Ratio {
    pub name: &'static str,
    pub section: &'static str,
    /// `None`: a figure to read, with no bound (how a suite scales with threads depends on the
    /// machine more than on the harness).
    pub target: Option<Target>,
}

/// Every ratio, in the order the sections run.
pub const RATIOS: [Ratio; 16] = [
    Ratio {
        name: "turn",
        section: "turn",
        target: Some(Target::AtMost(1.05)),
    },
    Ratio {
        name: "forwarded_turn",
        section: "forwarded_turn",
        target: Some(Target::AtMost(1.02)),
    },
    // What one explored schedule costs is the quiet it waits for at each held step: a figure to
    // read (it scales with `LIVE_EXPLORE_QUIET`), not a bound the harness can meet by being fast.
    Ratio {
        name: "explored_schedule",
        section: "explored_schedule",
        target: None,
    },
    // One explored run whole (lease, turn, release) on a warm workspace / in a fresh directory:
    // issue #42 asked for at most half of what a run cost before warm workspaces.
    Ratio {
        name: "explored_schedule.per_run",
        section: "explored_schedule",
        target: Some(Target::AtMost(0.5)),
    },
    // Through the recording relay to a local HTTPS upstream / straight to it.
    Ratio {
        name: "relayed_turn",
        section: "relayed_turn",
        target: Some(Target::AtMost(1.02)),
    },
    // A turn replayed from a cassette / scripted, per API recorded: chat completions first.
    Ratio {
        name: "replay_turn",
        section: "replay_turn",
        target: Some(Target::AtMost(1.05)),
    },
    Ratio {
        name: "replay_turn.anthropic",
        section: "replay_turn",
        target: Some(Target::AtMost(1.05)),
    },
    Ratio {
        name: "replay_turn.responses",
        section: "replay_turn",
        target: Some(Target::AtMost(1.05)),
    },
    Ratio {
        name: "replay_turn.gemini",
        section: "replay_turn",
        target: Some(Target::AtMost(1.05)),
    },
    Ratio {
        name: "provisioning",
        section: "provisioning",
        target: Some(Target::AtMost(1.05)),
    },
    // An ACP agent started and one turn through the harness / through a bare ACP client: issue
    // #43 asked for at most 5 % over the agent's own start and turn.
    Ratio {
        name: "acp_turn",
        section: "acp_turn",
        target: Some(Target::AtMost(1.05)),
    },
    // A shared scenario's CPU in its server should be little more than its turn's: at most half
    // of a fresh directory's (instance boot, project detection, ~22 `git` processes).
    Ratio {
        name: "shared_scenario_cpu",
        section: "scenario_cpu",
        target: Some(Target::AtMost(0.5)),
    },
    Ratio {
        name: "shared_speedup",
        section: "suite",
        target: Some(Target::AtLeast(3.0)),
    },
    Ratio {
        name: "thread_scaling",
        section: "suite",
        target: None,
    },
    // nextest runs each scenario in a process of its own: with servers shared across them it
    // should cost about what `cargo test` does.
    Ratio {
        name: "nextest_default",
        section: "nextest",
        target: Some(Target::AtMost(1.15)),
    },
    Ratio {
        name: "report_overhead",
        section: "report",
        target: Some(Target::AtMost(1.02)),
    },
];

/// The ratios a section that ran without error should have printed and did not, by name: a
/// side without samples, or a zero median, prints none, and must not pass unnoticed.
pub fn missing_ratios(section: &str, figures: &[Figure]) -> Vec<&'static str> {
    RATIOS
        .iter()
        .filter(|ratio| ratio.section == section)
        .filter(|ratio| {
            !figures
                .iter()
                .any(|f| matches!(f, Figure::Ratio { name, .. } if name == ratio.name))
        })
        .map(|ratio| ratio.name)
        .collect()
}

/// A target a ratio should meet.
#[derive(Clone, Copy, Debug)]
pub enum Target {
    /// The ratio must not exceed the bound.
    AtMost(f64),
    /// The ratio must reach the bound.
    AtLeast(f64),
}

impl Target {
    /// `target <name> <= 1.05: met (1.031)` or `… missed (…)`.
    pub fn verdict(self, name: &str, value: f64) -> String {
        let (op, bound, met) = match self {
            Target::AtMost(b) => ("<=", b, value <= b),
            Target::AtLeast(b) => (">=", b, value >= b),
        };
        let verdict = if met { "met" } else { "missed" };
        format!("target {name} {op} {bound}: {verdict} ({value:.3})")
    }
}
