//! Redacting a cassette's JSON on the way in, restoring its paths on the way out.
//!
//! Only strings (and object keys) change: numbers stay numbers, so a replayed `usage` still
//! parses. The redactor's JSON mode is not used for that reason (it turns token counts into
//! `"[tokens]"`).

use serde_json::{Map, Value};

use crate::redact::Redactor;

/// A metadata timestamp clients parse as a date (Ollama's `created_at`): kept, since
/// `[timestamp]` would not parse.
const KEPT_KEYS: &[&str] = &["created_at"];

/// `value` with every string and key redacted.
pub(crate) fn redact_json(redactor: &Redactor, value: &Value) -> Value {
    map_strings(value, &|key, text| redact_leaf(redactor, key, text))
}

/// One string of a response, the value of `key`, redacted.
pub(super) fn redact_leaf(redactor: &Redactor, key: Option<&str>, text: &str) -> String {
    match key {
        Some(key) if KEPT_KEYS.contains(&key) && !redactor.contains_secret(text) => text.to_owned(),
        _ => redactor.redact(text),
    }
}

/// `value` with the path placeholders of every string turned back into this scenario's paths.
pub(crate) fn restore_json(redactor: &Redactor, value: &Value) -> Value {
    map_strings(value, &|_, text| redactor.restore_paths(text))
}

/// Applies `f(key, text)` to every string (with the key it is the value of) and to every key.
fn map_strings(value: &Value, f: &dyn Fn(Option<&str>, &str) -> String) -> Value {
    fn walk(value: &Value, key: Option<&str>, f: &dyn Fn(Option<&str>, &str) -> String) -> Value {
        match value {
            Value::String(text) => Value::String(f(key, text)),
            Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, None, f)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (f(None, k), walk(v, Some(k), f)))
                    .collect::<Map<String, Value>>(),
            ),
            Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
        }
    }
    walk(value, None, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    #[test]
    fn strings_are_redacted_numbers_kept_and_paths_restored() {
        let recording = Redactor::default();
        recording.add_path(Path::new("/tmp/rec-root/workspace"), "[workspace]");
        recording.add_secret("sk-canary-0123");
        let chunk = json!({
            "created": 1_700_000_000, "created_at": "2025-01-01T00:00:00Z",
            "usage": {"prompt_tokens": 12},
            "choices": [{"delta": {"content": "see /tmp/rec-root/workspace/a.txt sk-canary-0123",
                                    "tool_calls": [{"id": "call_abc123"}]}}]
        });
        let stored = redact_json(&recording.with_fresh_numbering(), &chunk);
        assert_eq!(
            stored,
            json!({
                "created": 1_700_000_000, "created_at": "2025-01-01T00:00:00Z",
                "usage": {"prompt_tokens": 12},
                "choices": [{"delta": {"content": "see [workspace]/a.txt [secret]",
                                        "tool_calls": [{"id": "[call-1]"}]}}]
            })
        );
        let replaying = Redactor::default();
        replaying.add_path(Path::new("/tmp/replay-root/workspace"), "[workspace]");
        assert_eq!(
            restore_json(&replaying, &stored)["choices"][0]["delta"]["content"],
            "see /tmp/replay-root/workspace/a.txt [secret]"
        );
    }
}
