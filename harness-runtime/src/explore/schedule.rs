//! A schedule: the decisions of an exploring run that did not take the default, as the one-line
//! string `LIVE_SCHEDULE` replays (`3=a9f2,7=0c1e`; `fifo` when there are none).

use std::fmt;
use std::str::FromStr;

/// The spelling of a schedule without a single deviation: every decision took the step that had
/// waited longest.
pub(crate) const FIFO: &str = "fifo";

/// One deviation: at decision `decision` (1-based, counting only moments when more than one step
/// was held), the step whose [`tag`] is `tag` went first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Choice {
    pub(crate) decision: u32,
    pub(crate) tag: u16,
}

/// The deviations of one run from the default order, in increasing decision order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Schedule {
    choices: Vec<Choice>,
}

/// Why a schedule string is not one. The message names where, for a hand-edited `LIVE_SCHEDULE`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "at character {position} (entry {entry}, \"{text}\"): {problem}; a schedule is `fifo` or \
     entries `<decision>=<4 hex digits>` joined by `,`, as a failing exploration prints it"
)]
pub struct ScheduleError {
    /// 1-based character position where the problem starts.
    pub(crate) position: usize,
    /// 1-based entry number.
    pub(crate) entry: usize,
    /// The entry as written.
    pub(crate) text: String,
    pub(crate) problem: String,
}

impl Schedule {
    /// A schedule of `choices`; they must increase strictly in decision (a bug otherwise).
    pub(crate) fn new(choices: Vec<Choice>) -> Schedule {
        debug_assert!(
            choices.windows(2).all(|w| w[0].decision < w[1].decision),
            "choices out of order: {choices:?}"
        );
        Schedule { choices }
    }

    /// Its deviations, in decision order.
    pub(crate) fn choices(&self) -> &[Choice] {
        &self.choices
    }

    /// How many deviations (preemptions) it has.
    pub(crate) fn len(&self) -> usize {
        self.choices.len()
    }

    /// Whether it never deviates.
    pub(crate) fn is_fifo(&self) -> bool {
        self.choices.is_empty()
    }

    /// The same schedule without the choices at `indices` (positions in [`choices`](Self::choices)).
    pub(crate) fn without(&self, indices: std::ops::Range<usize>) -> Schedule {
        let mut choices = self.choices.clone();
        choices.drain(indices);
        Schedule { choices }
    }

    /// Parses a schedule as [`Display`](fmt::Display) writes it (surrounding whitespace aside).
    pub(crate) fn parse(text: &str) -> Result<Schedule, ScheduleError> {
        let trimmed = text.trim();
        let offset = text.len() - text.trim_start().len();
        if trimmed == FIFO {
            return Ok(Schedule::default());
        }
        let mut choices: Vec<Choice> = Vec::new();
        let mut start = offset;
        for (index, entry) in trimmed.split(',').enumerate() {
            let fail = |at: usize, problem: String| ScheduleError {
                position: at + 1,
                entry: index + 1,
                text: entry.to_owned(),
                problem,
            };
            let Some((decision, tag)) = entry.split_once('=') else {
                return Err(fail(
                    start,
                    if entry.is_empty() {
                        "the entry is empty".into()
                    } else {
                        "expected `<decision>=<tag>`".into()
                    },
                ));
            };
            let decision: u32 = match decision.parse() {
                Ok(n) if n >= 1 && decision.bytes().all(|b| b.is_ascii_digit()) => n,
                _ => {
                    return Err(fail(
                        start,
                        format!("`{decision}` is not a decision number (1 or more)"),
                    ));
                }
            };
            let tag_at = start + entry.find('=').map_or(0, |i| i + 1);
            let tag = match (tag.len(), u16::from_str_radix(tag, 16)) {
                (4, Ok(value)) if tag.bytes().all(|b| b.is_ascii_hexdigit()) => value,
                _ => {
                    return Err(fail(
                        tag_at,
                        format!("expected 4 hex digits after '=', found `{tag}`"),
                    ));
                }
            };
            if let Some(previous) = choices.last()
                && previous.decision >= decision
            {
                return Err(fail(
                    start,
                    format!(
                        "decision {decision} comes after decision {}: entries go in increasing \
                         decision order, each once",
                        previous.decision
                    ),
                ));
            }
            choices.push(Choice { decision, tag });
            start += entry.len() + 1;
        }
        Ok(Schedule { choices })
    }
}

impl FromStr for Schedule {
    type Err = ScheduleError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Schedule::parse(text)
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.choices.is_empty() {
            return f.write_str(FIFO);
        }
        for (i, choice) in self.choices.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}={:04x}", choice.decision, choice.tag)?;
        }
        Ok(())
    }
}

/// The tag of a step's thread name: the low 16 bits of its FNV-1a-32 hash, so a schedule names
/// the step it chose whatever order the held steps arrived in.
pub(crate) fn tag(thread: &str) -> u16 {
    (fnv1a32(thread.as_bytes()) & 0xffff) as u16
}

/// FNV-1a, 32 bits: small, stable across platforms and versions (unlike `DefaultHasher`).
pub(crate) fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &byte in bytes {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// FNV-1a, 64 bits, for seeds.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schedule_reads_back_as_it_was_written() {
        for text in ["fifo", "3=a9f2", "1=0000,2=ffff,17=0c1e"] {
            assert_eq!(Schedule::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(Schedule::parse("  3=A9F2 ").unwrap().to_string(), "3=a9f2");
        let schedule = Schedule::parse("2=0001,9=00ff").unwrap();
        assert_eq!(
            schedule.choices(),
            [
                Choice {
                    decision: 2,
                    tag: 1
                },
                Choice {
                    decision: 9,
                    tag: 0xff
                }
            ]
        );
        assert_eq!(schedule.without(0..1).to_string(), "9=00ff");
        assert_eq!(schedule.without(0..2), Schedule::default());
    }

    #[test]
    fn a_malformed_schedule_names_the_position_that_is_wrong() {
        let error = |text: &str| Schedule::parse(text).unwrap_err();
        let e = error("3=a9f2,7=zz");
        assert_eq!((e.position, e.entry), (10, 2), "{e}");
        assert!(
            e.to_string()
                .contains("expected 4 hex digits after '=', found `zz`"),
            "{e}"
        );
        let e = error("3=a9f2,,4=0000");
        assert_eq!((e.position, e.entry), (8, 2), "{e}");
        assert!(e.to_string().contains("the entry is empty"));
        let e = error("0=a9f2");
        assert!(
            e.to_string().contains("`0` is not a decision number"),
            "{e}"
        );
        let e = error("5=a9f2,5=0000");
        assert!(
            e.to_string().contains("decision 5 comes after decision 5"),
            "{e}"
        );
        let e = error("5=a9f2,+6=0000");
        assert_eq!(e.entry, 2);
        let e = error("fifo,1=0000");
        assert_eq!((e.position, e.entry), (1, 1), "{e}");
        assert!(error("").to_string().contains("the entry is empty"));
    }

    #[test]
    fn tags_are_stable() {
        // Known FNV-1a-32 values: a schedule written today replays tomorrow.
        assert_eq!(fnv1a32(b""), 0x811c_9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c_292c);
        assert_eq!(tag("a"), 0x292c);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
