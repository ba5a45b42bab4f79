//! Environment requirements of a scenario: present, then the settings' one rule (UTF-8,
//! non-empty, unpadded), and a JSON object where due.
//!
//! Messages name the variable and the problem, never the value: values are usually secrets.

use std::ffi::OsString;
use std::fmt;

use crate::settings::{self, Flaw};

/// The variable whose value must also be a JSON object (OpenCode reads it as its config).
const JSON_OBJECT_VARS: &[&str] = &[settings::CONFIG_CONTENT];

/// What is wrong with one required variable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Problem {
    /// Not set at all.
    Missing,
    /// Set, but breaking the rule every variable follows.
    Text(Flaw),
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
            Problem::Text(flaw) => write!(f, "{var} {flaw}"),
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

/// The value of the required variable `var` in `lookup` (the environment's is
/// `settings::raw`), if it meets the requirement.
pub(crate) fn value_with(
    var: &'static str,
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Result<String, Unmet> {
    checked(var, lookup(var)).map_err(|problem| Unmet { var, problem })
}

/// Checks `requires` against `lookup` (the environment, or a table in tests).
pub(crate) fn check_with(
    requires: &[&'static str],
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Result<(), Vec<Unmet>> {
    let unmet: Vec<Unmet> = requires
        .iter()
        .filter_map(|&var| {
            let problem = checked(var, lookup(var)).err()?;
            Some(Unmet { var, problem })
        })
        .collect();
    if unmet.is_empty() { Ok(()) } else { Err(unmet) }
}

/// The value of `var` if it meets the requirement, else what is wrong with it.
fn checked(var: &str, value: Option<OsString>) -> Result<String, Problem> {
    let value = value.ok_or(Problem::Missing)?;
    let text = settings::text(&value).map_err(Problem::Text)?;
    if JSON_OBJECT_VARS.contains(&var) {
        match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(_)) => {}
            Ok(_) => {
                return Err(Problem::NotJsonObject(
                    "valid JSON, but not an object".into(),
                ));
            }
            // Only the position: serde_json's messages may quote parts of the input.
            Err(e) => {
                return Err(Problem::NotJsonObject(format!(
                    "syntax error at line {}, column {}",
                    e.line(),
                    e.column()
                )));
            }
        }
    }
    Ok(text.to_string())
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
        let text = |flaw| vec![Problem::Text(flaw)];
        assert_eq!(problems(&["A"], &[("A", "")]), text(Flaw::Empty));
        assert_eq!(problems(&["A"], &[("A", "key\n")]), text(Flaw::Padded));
        assert_eq!(problems(&["A"], &[("A", " key")]), text(Flaw::Padded));
        assert_eq!(problems(&["A"], &[("A", "  \n")]), text(Flaw::Blank));
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
        assert_eq!(unmet[0].problem, Problem::Text(Flaw::NotUnicode));
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
