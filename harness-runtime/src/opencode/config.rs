//! Which `OPENCODE_CONFIG_CONTENT` an agent gets, and which of its values are secrets.

use serde_json::Value;

use super::{AgentOptions, ProvisionError};
use crate::redact::Redactor;

/// The variable a real-model scenario supplies (and declares in `requires`).
pub(crate) use crate::settings::CONFIG_CONTENT as CONFIG_ENV;

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
        let raw = crate::requirements::value(CONFIG_ENV).map_err(|unmet| {
            ProvisionError::Config(format!("{unmet} (required by the scenario)"))
        })?;
        // serde_json's message names a line and column, never the content.
        let mut config: Value = serde_json::from_str(&raw)
            .map_err(|e| ProvisionError::Config(format!("{CONFIG_ENV} is not valid JSON: {e}")))?;
        let model = match crate::requirements::value(MODEL_ENV) {
            Ok(model) if requires.contains(&MODEL_ENV) => Some(model),
            _ => None,
        };
        adapt_user_config(&mut config, model.as_deref(), &options.permission)?;
        return Ok(config);
    }
    Ok(model_config(options.permission.clone()))
}

/// The variable naming the real model among the config's providers.
pub(crate) use crate::settings::MODEL as MODEL_ENV;

/// Makes the user's config serve a scenario: the scenario's permission policy, the harness's
/// hermetic switches, and `model` pointing at `TEST_OLLAMA_MODEL`, which must be one of the
/// providers' models. Errors name models and providers, never option values (secrets live there).
fn adapt_user_config(
    config: &mut Value,
    model: Option<&str>,
    permission: &Value,
) -> Result<(), ProvisionError> {
    let Some(object) = config.as_object_mut() else {
        return Err(ProvisionError::Config(format!(
            "{CONFIG_ENV} must be a JSON object"
        )));
    };
    if let Some(model) = model {
        let providers = object.get("provider").and_then(Value::as_object);
        let owner = providers.and_then(|providers| {
            providers.iter().find_map(|(id, provider)| {
                provider
                    .get("models")
                    .and_then(Value::as_object)
                    .filter(|models| models.contains_key(model))
                    .map(|_| id.clone())
            })
        });
        let Some(provider) = owner else {
            let found: Vec<String> = providers
                .map(|providers| {
                    providers
                        .iter()
                        .map(|(id, provider)| {
                            let models: Vec<&str> = provider
                                .get("models")
                                .and_then(Value::as_object)
                                .map(|m| m.keys().map(String::as_str).collect())
                                .unwrap_or_default();
                            format!("{id}: [{}]", models.join(", "))
                        })
                        .collect()
                })
                .unwrap_or_default();
            return Err(ProvisionError::Config(format!(
                "the model `{model}` named by {MODEL_ENV} is not among the models of \
                 {CONFIG_ENV}'s providers (found: {}); add it under provider.<id>.models or \
                 fix {MODEL_ENV}",
                if found.is_empty() {
                    "no providers".to_string()
                } else {
                    found.join("; ")
                }
            )));
        };
        object.insert("model".into(), Value::String(format!("{provider}/{model}")));
    }
    object.insert("permission".into(), permission.clone());
    object.insert("autoupdate".into(), Value::Bool(false));
    object.insert("share".into(), Value::String("disabled".into()));
    Ok(())
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
    fn a_real_model_must_be_among_the_providers_models_and_errors_show_no_secret() {
        let mut config = json!({"provider": {"ollama": {
            "options": {"apiKey": "sk-canary-123456"},
            "models": {"gemma3:270m": {}}
        }}});
        let error = adapt_user_config(&mut config.clone(), Some("qwen"), &json!({}))
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`qwen`") && error.contains("ollama: [gemma3:270m]"),
            "{error}"
        );
        assert!(!error.contains("sk-canary"), "{error}");
        adapt_user_config(&mut config, Some("gemma3:270m"), &json!({"bash": "ask"})).unwrap();
        assert_eq!(config["model"], "ollama/gemma3:270m");
        assert_eq!(config["permission"], json!({"bash": "ask"}));
    }

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
