//! A schedule: the deviations of an exploring run from the default order, as the one-line
//! string `LIVE_SCHEDULE` replays. Each deviation names two steps, the one that went first and
//! the one that would have gone by default: `da2a.1>b7c1.1` ("the first step of thread da2a
//! before the first step of thread b7c1"). Steps are named by their thread's tag and their
//! place in it, not by when the decision came: an agent that timed things a little differently
//! (two steps held together in one run, apart in another) still meets the same steps.

use std::fmt;
use std::str::FromStr;

/// The spelling of a schedule without a single deviation: every decision took the step that had
/// waited longest.
pub(crate) const FIFO: &str = "fifo";

/// One step of a run: its thread's [`tag`] and its place in the thread (1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct StepId {
    pub(crate) tag: u16,
    pub(crate) seq: u32,
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04x}.{}", self.tag, self.seq)
    }
}

/// One deviation: whenever `first` and `over` are held together, `first` goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Choice {
    pub(crate) first: StepId,
    pub(crate) over: StepId,
}

impl fmt::Display for Choice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}", self.first, self.over)
    }
}

/// The deviations of one run from the default order, in the order they happened.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Schedule {
    choices: Vec<Choice>,
}

/// Why a schedule string is not one. The message names where, for a hand-edited `LIVE_SCHEDULE`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "at character {position} (entry {entry}, \"{text}\"): {problem}; a schedule is `fifo` or \
     deviations `<tag>.<n>><tag>.<n>` (4 hex digits, a step number) joined by `,`, as a \
     failing exploration prints it"
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
    /// A schedule of `choices`, in the order they happened.
    pub(crate) fn new(choices: Vec<Choice>) -> Schedule {
        Schedule { choices }
    }

    /// Its deviations, in the order they happened.
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
        let mut choices = Vec::new();
        let mut start = offset;
        for (index, entry) in trimmed.split(',').enumerate() {
            let fail = |at: usize, problem: String| ScheduleError {
                position: at + 1,
                entry: index + 1,
                text: entry.to_owned(),
                problem,
            };
            if entry.is_empty() {
                return Err(fail(start, "the entry is empty".into()));
            }
            let Some((first, over)) = entry.split_once('>') else {
                return Err(fail(
                    start,
                    "expected `<tag>.<n>><tag>.<n>`: no `>` between two steps".into(),
                ));
            };
            let first = step(first).map_err(|problem| fail(start, problem))?;
            let over_at = start + first_len(entry) + 1;
            let over = step(over).map_err(|problem| fail(over_at, problem))?;
            choices.push(Choice { first, over });
            start += entry.len() + 1;
        }
        Ok(Schedule { choices })
    }
}

fn first_len(entry: &str) -> usize {
    entry.find('>').unwrap_or(entry.len())
}

/// `da2a.3` → the step.
fn step(text: &str) -> Result<StepId, String> {
    let Some((tag, seq)) = text.split_once('.') else {
        return Err(format!(
            "`{text}` is not a step: expected `<4 hex digits>.<n>`"
        ));
    };
    let tag = match u16::from_str_radix(tag, 16) {
        Ok(value) if tag.len() == 4 && tag.bytes().all(|b| b.is_ascii_hexdigit()) => value,
        _ => return Err(format!("`{tag}` is not a tag: expected 4 hex digits")),
    };
    let seq = match seq.parse::<u32>() {
        Ok(n) if n >= 1 && seq.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => return Err(format!("`{seq}` is not a step number (1 or more)")),
    };
    Ok(StepId { tag, seq })
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
            write!(f, "{choice}")?;
        }
        Ok(())
    }
}

/// The tag of a step's thread name: the low 16 bits of its FNV-1a-32 hash.
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
        for text in ["fifo", "da2a.1>b7c1.1", "0000.1>ffff.12,caea.30>3566.2"] {
            assert_eq!(Schedule::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            Schedule::parse("  DA2A.1>b7c1.1 ").unwrap().to_string(),
            "da2a.1>b7c1.1"
        );
        let schedule = Schedule::parse("da2a.1>b7c1.1,caea.3>3566.2").unwrap();
        assert_eq!(
            schedule.choices()[1],
            Choice {
                first: StepId {
                    tag: 0xcaea,
                    seq: 3
                },
                over: StepId {
                    tag: 0x3566,
                    seq: 2
                },
            }
        );
        assert_eq!(schedule.without(0..1).to_string(), "caea.3>3566.2");
        assert!(schedule.without(0..2).is_fifo());
    }

    #[test]
    fn a_malformed_schedule_names_the_position_that_is_wrong() {
        let error = |text: &str| Schedule::parse(text).unwrap_err();
        let e = error("da2a.1>b7c1.1,caea.3>zz.2");
        assert_eq!((e.position, e.entry), (22, 2), "{e}");
        assert!(e.to_string().contains("`zz` is not a tag"), "{e}");
        let e = error("da2a.1>b7c1.1,,caea.3>3566.2");
        assert_eq!((e.position, e.entry), (15, 2), "{e}");
        assert!(e.to_string().contains("the entry is empty"));
        let e = error("da2a.0>b7c1.1");
        assert!(e.to_string().contains("`0` is not a step number"), "{e}");
        let e = error("da2a.1");
        assert!(e.to_string().contains("no `>` between two steps"), "{e}");
        let e = error("da2a>b7c1.1");
        assert!(e.to_string().contains("`da2a` is not a step"), "{e}");
        let e = error("da2a.+1>b7c1.1");
        assert!(e.to_string().contains("`+1` is not a step number"), "{e}");
        let e = error("fifo,da2a.1>b7c1.1");
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
