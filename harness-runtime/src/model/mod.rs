//! The embedded scripted model: an OpenAI- and Ollama-compatible server on loopback.

/// The scenario's scripted model, started on first use.
#[derive(Debug, Default)]
pub struct ModelSlot {}

impl ModelSlot {
    /// Ends the model's part of the scenario: an unanswered request fails it, with a summary.
    pub(crate) fn finish(&mut self, redactor: &crate::evidence::Redactor) -> Result<(), String> {
        let _ = redactor;
        Ok(())
    }
}
