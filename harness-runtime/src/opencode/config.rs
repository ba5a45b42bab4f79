//! Which `OPENCODE_CONFIG_CONTENT` an agent gets, and which of its values are secrets.

use serde_json::Value;

use super::{AgentOptions, ProvisionError};
use crate::evidence::Redactor;

/// The variable a real-model scenario supplies (and declares in `requires`).
pub(crate) const CONFIG_ENV: &str = "OPENCODE_CONFIG_CONTENT";

/// Where the config comes from, in priority order: the options' explicit `config`; the
/// environment, when the scenario `requires` it; the scripted model (`model_config`).
pub(crate) fn choose(
    options: &AgentOptions,
    requires: &[&str],
    model_config: impl FnOnce(Value) -> Value,
) -> Result<Value, ProvisionError> {
    if let Some(config) = &options.config {
        return Ok(config.clone());
    }
    if requires.contains(&CONFIG_ENV) {
        let raw = std::env::var(CONFIG_ENV).map_err(|_| {
            ProvisionError::Config(format!(
                "{CONFIG_ENV} is required by the scenario but not set (or not UTF-8)"
            ))
        })?;
        // serde_json's message names a line and column, never the content.
        return serde_json::from_str(&raw)
            .map_err(|e| ProvisionError::Config(format!("{CONFIG_ENV} is not valid JSON: {e}")));
    }
    Ok(model_config(options.permission.clone()))
}

/// Registers every string under each provider's `options` and `headers` as a secret: API keys,
/// tokens and private base URLs live there. Strings shorter than 4 characters are left out: they
/// cannot be credentials and would blank out unrelated text.
pub(crate) fn register_secrets(config: &Value, redactor: &Redactor) {
    let Some(providers) = config.get("provider").and_then(Value::as_object) else {
        return;
    };
    for provider in providers.values() {
        for key in ["options", "headers"] {
            if let Some(value) = provider.get(key) {
                each_string(value, &mut |s| {
                    if s.len() >= 4 {
                        redactor.add_secret(s);
                    }
                });
            }
        }
    }
}

fn each_string(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| each_string(v, f)),
        Value::Object(map) => map.values().for_each(|v| each_string(v, f)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn explicit_config_wins_then_the_model() {
        let options = AgentOptions::default().config(json!({"a": 1}));
        assert_eq!(
            choose(&options, &[], |_| json!(0)).unwrap(),
            json!({"a": 1})
        );
        let options = AgentOptions::default().permission(json!("ask"));
        assert_eq!(
            choose(&options, &[], |p| json!({"permission": p})).unwrap(),
            json!({"permission": "ask"})
        );
    }

    #[test]
    fn provider_options_and_headers_are_secrets() {
        let redactor = Redactor::for_scenario();
        register_secrets(
            &json!({"provider": {"x": {
                "options": {"apiKey": "sk-123456", "baseURL": "http://10.0.0.1/v1", "n": 1,
                            "headers": {"Authorization": "Bearer abcdef"}},
                "name": "Visible"
            }}}),
            &redactor,
        );
        let text = redactor.redact("sk-123456 http://10.0.0.1/v1 Bearer abcdef Visible");
        assert_eq!(text, "[secret] [secret] [secret] Visible");
    }
}
