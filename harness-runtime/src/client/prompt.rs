//! A prompt and how its turn is run: text, structured-output format, asks, ceiling.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::policy::AskPolicy;
use super::types::ModelRef;

/// Default turn ceiling (before scaling).
pub const DEFAULT_TURN_CEILING: Duration = Duration::from_secs(120);

/// A prompt and how its turn is run.
#[derive(Clone, Debug, Default)]
pub struct Prompt {
    /// The user text.
    pub(crate) text: String,
    /// Output format, e.g. `{"type":"json_schema","schema":{…}}` (see [`Prompt::json_schema`]).
    pub(crate) format: Option<Value>,
    /// The agent (`build`, `plan`, …).
    pub(crate) agent: Option<String>,
    /// The model.
    pub(crate) model: Option<ModelRef>,
    /// Tools to enable (`true`) or disable (`false`) for this prompt.
    pub(crate) tools: Option<BTreeMap<String, bool>>,
    /// An extra system prompt.
    pub(crate) system: Option<String>,
    /// How asks raised during the turn are answered.
    pub(crate) asks: AskPolicy,
    /// The turn's ceiling (default 120 s, scaled).
    pub(crate) ceiling: Option<Duration>,
    /// How long an ask may stay unanswered before the turn fails naming it (default: until the
    /// turn's ceiling). See [`Prompt::with_ask_ceiling`].
    pub(crate) ask_ceiling: Option<Duration>,
}

impl Prompt {
    /// A plain text prompt.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// Asks for structured output matching the JSON schema `schema`.
    pub fn json_schema(mut self, schema: Value) -> Self {
        self.format = Some(json!({"type": "json_schema", "schema": schema}));
        self
    }

    /// Runs the prompt with the agent `agent` (`build`, `plan`, …).
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Runs the prompt on `model`.
    pub fn model(mut self, model: ModelRef) -> Self {
        self.model = Some(model);
        self
    }

    /// Enables (`true`) or disables (`false`) the tool `tool` for this prompt.
    pub fn tool(mut self, tool: impl Into<String>, enabled: bool) -> Self {
        self.tools
            .get_or_insert_with(BTreeMap::new)
            .insert(tool.into(), enabled);
        self
    }

    /// Adds an extra system prompt.
    pub fn system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// The user text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Sets the ask policy.
    pub fn asks(mut self, asks: AskPolicy) -> Self {
        self.asks = asks;
        self
    }

    /// Sets the turn's ceiling, used as given (scale it with [`crate::scaled`] if it should
    /// follow `LIVE_TIMEOUT_SCALE`).
    pub fn with_ceiling(mut self, ceiling: Duration) -> Self {
        self.ceiling = Some(ceiling);
        self
    }

    /// Fails the turn with [`super::ClientError::AskUnanswered`] once an ask (a permission
    /// request or a question) has stayed unanswered for `ceiling`, used as given: a scenario that
    /// expects no ask, or leaves one pending on purpose, learns it in seconds instead of at the
    /// turn's ceiling. The clock restarts when every ask is answered (by the policy or by anyone
    /// else); the turn's own ceiling still applies.
    pub fn with_ask_ceiling(mut self, ceiling: Duration) -> Self {
        self.ask_ceiling = Some(ceiling);
        self
    }

    /// The turn's ceiling: the one set, else 120 s scaled.
    pub fn effective_ceiling(&self) -> Duration {
        self.ceiling
            .unwrap_or_else(|| crate::settings::scaled(DEFAULT_TURN_CEILING))
    }

    /// The request body.
    pub(crate) fn body(&self) -> Value {
        let mut body = json!({"parts": [{"type": "text", "text": self.text}]});
        if let Some(f) = &self.format {
            body["format"] = f.clone();
        }
        if let Some(a) = &self.agent {
            body["agent"] = json!(a);
        }
        if let Some(m) = &self.model {
            body["model"] = json!(m);
        }
        if let Some(t) = &self.tools {
            body["tools"] = json!(t);
        }
        if let Some(s) = &self.system {
            body["system"] = json!(s);
        }
        body
    }
}
