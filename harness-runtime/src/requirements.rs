//! Environment requirements of a scenario: present, UTF-8, non-empty, unpadded, JSON where due.
//!
//! Messages name the variable and the problem, never the value: values are usually secrets.

use std::ffi::OsString;
use std::fmt;

/// The variable whose value must also be a JSON object (OpenCode reads it as its config).
const JSON_OBJECT_VARS: &[&str] = &["OPENCODE_CONFIG_CONTENT"];

/// What is wrong with one required variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Not set at all.
    Missing,
    /// Set, but not valid UTF-8.
    NotUnicode,
    /// Set to the empty string.
    Empty,
    /// Set to whitespace only (a padded empty value).
    Blank,
    /// Leading or trailing whitespace (a copy-paste accident, usually a newline).
    Padded,
    /// Not a JSON object; the detail never quotes the value.
    NotJsonObject(String),
}

/// One unmet requirement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unmet {
    pub(crate) var: &'static str,
    pub(crate) problem: Problem,
}

impl fmt::Display for Unmet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let var = self.var;
        match &self.problem {
            Problem::Missing => write!(f, "{var} is not set"),
            Problem::NotUnicode => write!(f, "{var} is not valid UTF-8"),
            Problem::Empty => write!(f, "{var} is empty"),
            Problem::Blank => write!(f, "{var} holds only whitespace"),
            Problem::Padded => write!(f, "{var} has leading or trailing whitespace"),
            Problem::NotJsonObject(detail) => write!(f, "{var} is not a JSON object ({detail})"),
        }
    }
}

/// Every unmet requirement, as one sentence: `requires A (A is not set; B is empty)`.
pub(crate) fn describe(unmet: &[Unmet]) -> String {
    let vars: Vec<&str> = unmet.iter().map(|u| u.var).collect();
    let problems: Vec<String> = unmet.iter().map(Unmet::to_string).collect();
    format!(
        "requires {}: {}; set it to run this scenario",
        vars.join(", "),
        problems.join("; ")
    )
}

/// Checks `requires` against the process environment.
pub(crate) fn check(requires: &[&'static str]) -> Result<(), Vec<Unmet>> {
    check_with(requires, |var| std::env::var_os(var))
}

/// Checks `requires` against `lookup` (the environment, or a table in tests).
pub(crate) fn check_with(
    requires: &[&'static str],
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Result<(), Vec<Unmet>> {
    let unmet: Vec<Unmet> = requires
        .iter()
        .filter_map(|&var| problem(var, lookup(var)).map(|problem| Unmet { var, problem }))
        .collect();
    if unmet.is_empty() { Ok(()) } else { Err(unmet) }
}

fn problem(var: &str, value: Option<OsString>) -> Option<Problem> {
    let Some(value) = value else {
        return Some(Problem::Missing);
    };
    let Some(text) = value.to_str() else {
        return Some(Problem::NotUnicode);
    };
    if text.is_empty() {
        return Some(Problem::Empty);
    }
    if text.trim().is_empty() {
        return Some(Problem::Blank);
    }
    if text.trim() != text {
        return Some(Problem::Padded);
    }
    if JSON_OBJECT_VARS.contains(&var) {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(_)) => {}
            Ok(_) => {
                return Some(Problem::NotJsonObject(
                    "valid JSON, but not an object".into(),
                ));
            }
            // Only the position: serde_json's messages may quote parts of the input.
            Err(e) => {
                return Some(Problem::NotJsonObject(format!(
                    "syntax error at line {}, column {}",
                    e.line(),
                    e.column()
                )));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let pairs: Vec<(String, OsString)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |var| pairs.iter().find(|(k, _)| k == var).map(|(_, v)| v.clone())
    }

    fn problems(requires: &[&'static str], pairs: &[(&str, &str)]) -> Vec<Problem> {
        match check_with(requires, env(pairs)) {
            Ok(()) => Vec::new(),
            Err(unmet) => unmet.into_iter().map(|u| u.problem).collect(),
        }
    }

    #[test]
    fn present_values_pass() {
        assert_eq!(problems(&["A"], &[("A", "x")]), vec![]);
        assert_eq!(
            problems(
                &["OPENCODE_CONFIG_CONTENT"],
                &[("OPENCODE_CONFIG_CONTENT", "{\"a\":1}")]
            ),
            vec![]
        );
    }

    #[test]
    fn each_problem_is_reported() {
        assert_eq!(problems(&["A"], &[]), vec![Problem::Missing]);
        assert_eq!(problems(&["A"], &[("A", "")]), vec![Problem::Empty]);
        assert_eq!(problems(&["A"], &[("A", "key\n")]), vec![Problem::Padded]);
        assert_eq!(problems(&["A"], &[("A", " key")]), vec![Problem::Padded]);
        assert_eq!(problems(&["A"], &[("A", "  \n")]), vec![Problem::Blank]);
        assert!(matches!(
            problems(
                &["OPENCODE_CONFIG_CONTENT"],
                &[("OPENCODE_CONFIG_CONTENT", "[1]")]
            )[..],
            [Problem::NotJsonObject(_)]
        ));
        assert_eq!(problems(&["A", "B"], &[]).len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn non_unicode_is_reported() {
        use std::os::unix::ffi::OsStringExt;
        let lookup = |_: &str| Some(OsString::from_vec(vec![0xff, 0xfe]));
        let unmet = check_with(&["A"], lookup).unwrap_err();
        assert_eq!(unmet[0].problem, Problem::NotUnicode);
    }

    #[test]
    fn messages_never_quote_the_value() {
        let secret = "{\"apiKey\": sk-live-123";
        let unmet = check_with(
            &["OPENCODE_CONFIG_CONTENT"],
            env(&[("OPENCODE_CONFIG_CONTENT", secret)]),
        )
        .unwrap_err();
        let text = describe(&unmet);
        assert!(text.contains("OPENCODE_CONFIG_CONTENT"), "{text}");
        assert!(text.contains("not a JSON object"), "{text}");
        assert!(!text.contains("sk-live"), "{text}");
        let padded = check_with(&["TOKEN"], env(&[("TOKEN", "sk-live-123 ")])).unwrap_err();
        assert!(!describe(&padded).contains("sk-live"));
    }
}
