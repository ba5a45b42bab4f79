//! The one rule every variable of the harness follows: unset, valid, or invalid with a message
//! naming the variable, the problem and a valid value.
//!
//! A set value must be valid UTF-8, non-empty and without leading or trailing whitespace (a stray
//! newline from a CI file is a mistake worth seeing, so nothing is trimmed), and then mean
//! something to its variable. Invalid values are reported, never silently replaced: a typo in
//! `LIVE_TIMEOUT_SCALE` would otherwise turn into a confusing timeout much later. Messages never
//! quote the value: required variables are usually secrets, and paths are volatile.

use std::ffi::{OsStr, OsString};

/// The value of `name` in this process's environment, as the OS holds it. Every read of the
/// environment goes through here; what the value means is for [`Setting`] or the caller's rule.
pub(crate) fn raw(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// What is wrong with the text of a set variable, before its meaning is looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Flaw {
    /// Not valid UTF-8.
    #[error("is not valid UTF-8")]
    NotUnicode,
    /// The empty string.
    #[error("is empty")]
    Empty,
    /// Whitespace only (a padded empty value).
    #[error("holds only whitespace")]
    Blank,
    /// Leading or trailing whitespace (a copy-paste accident, usually a newline).
    #[error("has leading or trailing whitespace")]
    Padded,
}

impl Flaw {
    /// What to do about it, given a valid value.
    fn advice(self, expected: &str) -> String {
        match self {
            Flaw::NotUnicode => format!("set it to {expected}"),
            Flaw::Empty | Flaw::Blank => format!("unset it, or set it to {expected}"),
            Flaw::Padded => format!("set it to {expected}, nothing around it"),
        }
    }
}

/// The text of a set variable, if it has none of the [`Flaw`]s.
pub(crate) fn text(raw: &OsStr) -> Result<&str, Flaw> {
    let text = raw.to_str().ok_or(Flaw::NotUnicode)?;
    if text.is_empty() {
        Err(Flaw::Empty)
    } else if text.trim().is_empty() {
        Err(Flaw::Blank)
    } else if text.trim() != text {
        Err(Flaw::Padded)
    } else {
        Ok(text)
    }
}

/// A variable of the harness set to a value it cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{name} {problem}")]
pub(crate) struct InvalidSetting {
    /// The variable.
    pub(crate) name: &'static str,
    /// What is wrong, and what to do.
    pub(crate) problem: Problem,
}

/// What is wrong with a setting's value, with a valid value to suggest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Problem {
    /// The text breaks the rule.
    #[error("{flaw}: {}", .flaw.advice(.expected))]
    Text { flaw: Flaw, expected: &'static str },
    /// The text is fine but means nothing to this variable.
    #[error("must be {expected}")]
    Meaning { expected: &'static str },
    /// The text is almost a value, and the reason says where it goes wrong (a long value such as
    /// a schedule, where "must be …" would leave the user searching).
    #[error("is not {what}: {reason}")]
    Reason { what: &'static str, reason: String },
}

/// One variable of the harness: its name, a valid value to suggest, and what its text means.
pub(crate) struct Setting<T> {
    pub(crate) name: &'static str,
    /// Valid values as a message suggests them, e.g. "a positive number such as 2 or 1.5".
    pub(crate) expected: &'static str,
    /// The meaning of a text that passed the rule; `None` when it has none.
    pub(crate) parse: fn(&str) -> Option<T>,
}

impl<T> Setting<T> {
    /// The value in this process's environment; `None` when unset.
    pub(crate) fn read(&self) -> Result<Option<T>, InvalidSetting> {
        self.parse_raw(raw(self.name).as_deref())
    }

    /// [`read`](Self::read) with the value made explicit.
    pub(crate) fn parse_raw(&self, raw: Option<&OsStr>) -> Result<Option<T>, InvalidSetting> {
        let expected = self.expected;
        parse_with(self.name, expected, raw, |text| {
            (self.parse)(text).ok_or(Problem::Meaning { expected })
        })
    }
}

/// The one rule for the value `raw` of `name`, then `parse` for its meaning: for a variable whose
/// wrong values need a [`Problem::Reason`] each. `expected` is what a flawed text is told to be.
pub(crate) fn parse_with<T>(
    name: &'static str,
    expected: &'static str,
    raw: Option<&OsStr>,
    parse: impl FnOnce(&str) -> Result<T, Problem>,
) -> Result<Option<T>, InvalidSetting> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let problem = match text(raw) {
        Ok(text) => match parse(text) {
            Ok(value) => return Ok(Some(value)),
            Err(problem) => problem,
        },
        Err(flaw) => Problem::Text { flaw, expected },
    };
    Err(InvalidSetting { name, problem })
}

#[cfg(test)]
impl<T> Setting<T> {
    /// The meaning of `value`, or the message an invalid one gets.
    pub(crate) fn test_read(&self, value: &str) -> Result<Option<T>, String> {
        self.parse_raw(Some(OsStr::new(value)))
            .map_err(|e| e.to_string())
    }
}

/// The values a flag takes, as messages suggest them.
pub(crate) const FLAG_VALUES: &str = "1, true or yes (on), or 0, false or no (off)";

/// A flag: `1`/`true`/`yes` or `0`/`false`/`no`; anything else is an error, not "off".
pub(crate) fn flag(text: &str) -> Option<bool> {
    match text {
        "1" | "true" | "yes" => Some(true),
        "0" | "false" | "no" => Some(false),
        _ => None,
    }
}

/// Any text that passed the rule, as it is (ids, names).
pub(crate) fn verbatim(text: &str) -> Option<String> {
    Some(text.to_string())
}

/// Any text that passed the rule, as a path.
pub(crate) fn path(text: &str) -> Option<std::path::PathBuf> {
    Some(text.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUMBER: Setting<u32> = Setting {
        name: "LIVE_TEST_NUMBER",
        expected: "a number such as 7",
        parse: |text| text.parse().ok(),
    };

    fn message(setting: &Setting<u32>, value: &str) -> String {
        setting.test_read(value).unwrap_err()
    }

    #[test]
    fn unset_is_none_and_a_valid_value_is_its_meaning() {
        assert_eq!(NUMBER.parse_raw(None), Ok(None));
        assert_eq!(NUMBER.parse_raw(Some(OsStr::new("7"))), Ok(Some(7)));
    }

    #[test]
    fn each_flaw_is_named_with_what_to_do() {
        assert_eq!(
            message(&NUMBER, ""),
            "LIVE_TEST_NUMBER is empty: unset it, or set it to a number such as 7"
        );
        assert_eq!(
            message(&NUMBER, " \n"),
            "LIVE_TEST_NUMBER holds only whitespace: unset it, or set it to a number such as 7"
        );
        for padded in [" 7", "7\n", "\t7 "] {
            assert_eq!(
                message(&NUMBER, padded),
                "LIVE_TEST_NUMBER has leading or trailing whitespace: set it to a number such as \
                 7, nothing around it",
                "{padded:?}"
            );
        }
        assert_eq!(
            message(&NUMBER, "seven"),
            "LIVE_TEST_NUMBER must be a number such as 7"
        );
    }

    #[test]
    fn a_non_unicode_value_is_named() {
        use std::os::unix::ffi::OsStrExt;
        let raw = OsStr::from_bytes(&[b'7', 0xff]);
        assert_eq!(text(raw), Err(Flaw::NotUnicode));
        assert_eq!(
            NUMBER.parse_raw(Some(raw)).unwrap_err().to_string(),
            "LIVE_TEST_NUMBER is not valid UTF-8: set it to a number such as 7"
        );
    }

    #[test]
    fn messages_never_quote_the_value() {
        for value in ["sk-live-123 ", "sk-live-123"] {
            assert!(!message(&NUMBER, value).contains("sk-live"), "{value:?}");
        }
    }

    #[test]
    fn flags_are_on_off_or_an_error() {
        for on in ["1", "true", "yes"] {
            assert_eq!(flag(on), Some(true), "{on}");
        }
        for off in ["0", "false", "no"] {
            assert_eq!(flag(off), Some(false), "{off}");
        }
        // Anything else is an error, not a silent "off": `LIVE_STRICT=on` must not run lax.
        for other in ["on", "off", "TRUE", "Yes", "2", "y"] {
            assert_eq!(flag(other), None, "{other}");
        }
    }
}
