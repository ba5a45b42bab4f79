//! A transcript: what one interaction sent and got, normalized; and how two are compared.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The steps of one interaction, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Transcript {
    pub(crate) steps: Vec<Step>,
}

/// One step of an interaction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub(crate) enum Step {
    /// A request and its answer. `request` reads `POST /session/[session-1]/message?limit=2`.
    Call {
        request: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
        status: u16,
        answer: Value,
    },
    /// The types of the events the agent sent since the previous `events` step, up to and
    /// including the one awaited; a run of one type counts once (streaming splits a part's
    /// text into as many deltas as the model sent chunks).
    Events { until: String, types: Vec<String> },
    /// A value the interaction derived and wants compared (a count, an order).
    Note { what: String, value: Value },
}

impl Step {
    /// How a difference names the step: the request line, or what it recorded.
    pub(crate) fn label(&self) -> String {
        match self {
            Step::Call { request, .. } => request.clone(),
            Step::Events { until, .. } => format!("events until {until}"),
            Step::Note { what, .. } => format!("note {what}"),
        }
    }
}

/// The first place two transcripts differ.
#[derive(Debug, PartialEq)]
pub(crate) struct Difference {
    /// Index of the step (0-based).
    pub(crate) step: usize,
    /// The reference's label of the step (or the other's, past the reference's end).
    pub(crate) label: String,
    /// The JSON pointer of the field within the step, e.g. `/answer/time/archived`.
    pub(crate) field: String,
    pub(crate) expected: Option<Value>,
    pub(crate) actual: Option<Value>,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |v: &Option<Value>| match v {
            Some(v) => v.to_string(),
            None => "nothing".to_owned(),
        };
        write!(
            f,
            "step {} `{}`, field `{}`: expected {}, got {}",
            self.step + 1,
            self.label,
            if self.field.is_empty() {
                "/"
            } else {
                &self.field
            },
            show(&self.expected),
            show(&self.actual)
        )
    }
}

/// The first difference between `expected` and `actual`, step by step, field by field (object
/// keys in sorted order, array items in order).
pub(crate) fn first_difference(expected: &Transcript, actual: &Transcript) -> Option<Difference> {
    let count = expected.steps.len().max(actual.steps.len());
    for index in 0..count {
        let (e, a) = (expected.steps.get(index), actual.steps.get(index));
        let label = e.or(a).map(Step::label).unwrap_or_default();
        let as_json =
            |s: Option<&Step>| s.map(|s| serde_json::to_value(s).expect("a step is JSON"));
        let (e, a) = (as_json(e), as_json(a));
        if let Some((field, expected, actual)) = first_value_difference("", e.as_ref(), a.as_ref())
        {
            return Some(Difference {
                step: index,
                label,
                field,
                expected,
                actual,
            });
        }
    }
    None
}

/// The first differing path under `path` in two optional values.
fn first_value_difference(
    path: &str,
    expected: Option<&Value>,
    actual: Option<&Value>,
) -> Option<(String, Option<Value>, Option<Value>)> {
    let differ = || Some((path.to_owned(), expected.cloned(), actual.cloned()));
    match (expected, actual) {
        (None, None) => None,
        (Some(Value::Object(e)), Some(Value::Object(a))) => {
            let mut keys: Vec<&String> = e.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                first_value_difference(
                    &format!("{path}/{}", pointer_escape(key)),
                    e.get(key),
                    a.get(key),
                )
            })
        }
        (Some(Value::Array(e)), Some(Value::Array(a))) => (0..e.len().max(a.len()))
            .find_map(|i| first_value_difference(&format!("{path}/{i}"), e.get(i), a.get(i))),
        (Some(e), Some(a)) if e == a => None,
        _ => differ(),
    }
}

/// A JSON pointer token (RFC 6901).
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
