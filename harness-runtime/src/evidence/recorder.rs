//! The ordered recorder behind `live.evidence()`.

use std::sync::{Arc, Mutex};

use super::Redactor;

/// Structured facts recorded in order, redacted on the way in.
#[derive(Debug)]
pub struct Evidence {
    redactor: Arc<Redactor>,
    entries: Mutex<Vec<(String, serde_json::Value)>>,
}

impl Evidence {
    pub(crate) fn new(redactor: Arc<Redactor>) -> Self {
        Self {
            redactor,
            entries: Mutex::new(Vec::new()),
        }
    }

    /// Records a free-form fact.
    pub fn record(&self, key: &str, value: impl serde::Serialize) {
        let value = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        let value = serde_json::from_str(&self.redactor.redact(&value.to_string()))
            .unwrap_or(serde_json::Value::Null);
        self.entries
            .lock()
            .expect("evidence lock")
            .push((key.to_string(), value));
    }
}
