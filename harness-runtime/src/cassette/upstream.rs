//! The real provider a recording relays to, read from the user's OpenCode config.
//!
//! The provider is the one of the config's `model` (`"<provider>/<model>"`): its `npm` decides
//! the API (`ollama` in the name: Ollama's native chat, else OpenAI chat completions), its
//! `options.baseURL` the address, `options.apiKey` the bearer token, `options.headers` and the
//! provider's `headers` the extra headers. OpenCode's `{env:NAME}` in those strings is resolved.
//! Every such string is a secret: none is shown in an error.

use std::fmt;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::error::CassetteError;
use super::format::{Recorded, WireApi};

/// The provider package OpenCode uses when a provider names none.
const DEFAULT_NPM: &str = "@ai-sdk/openai-compatible";
/// Ollama's own default address.
const OLLAMA_DEFAULT_BASE: &str = "http://127.0.0.1:11434/api";
/// The key OpenCode gets instead of the real one while recording (the relay adds the real one).
const RELAY_API_KEY: &str = "cassette-relay";

/// Where and how to reach the real model.
pub(crate) struct Upstream {
    /// The provider's id in the config.
    pub(crate) provider: String,
    /// `{baseURL}/chat/completions` or `{baseURL}/chat`.
    pub(crate) chat_url: String,
    /// `Authorization` and the configured headers.
    pub(crate) headers: HeaderMap,
    /// What a replay's config needs.
    pub(crate) recorded: Recorded,
    /// Every credential, as configured and as resolved.
    pub(crate) secrets: Vec<String>,
}

impl fmt::Debug for Upstream {
    /// The provider and API only: the rest is the user's secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Upstream")
            .field("provider", &self.provider)
            .field("api", &self.recorded.api)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// The upstream of `config` (the user's config, adapted to the scenario), resolving
    /// `{env:NAME}` with `env`.
    pub(crate) fn from_config(
        config: &Value,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, CassetteError> {
        let fail = |what: String| Err(CassetteError::Upstream(what));
        let Some(named) = config.get("model").and_then(Value::as_str) else {
            return fail(
                "the config names no `model` (\"<provider>/<model>\"); set TEST_OLLAMA_MODEL to \
                 one of its providers' models"
                    .into(),
            );
        };
        let Some((provider_id, model)) = named.split_once('/') else {
            return fail(format!(
                "the config's `model` `{named}` is not \"<provider>/<model>\""
            ));
        };
        let Some(provider) = config.pointer(&format!("/provider/{}", pointer_escape(provider_id)))
        else {
            return fail(format!(
                "the provider `{provider_id}` of the config's `model` is not among its providers"
            ));
        };
        let npm = provider
            .get("npm")
            .and_then(Value::as_str)
            .unwrap_or(DEFAULT_NPM)
            .to_owned();
        let api = if npm.contains("ollama") {
            WireApi::Ollama
        } else {
            WireApi::OpenAi
        };
        let options = provider.get("options").cloned().unwrap_or(Value::Null);
        let mut secrets = Vec::new();
        collect_strings(&options, &mut secrets);
        collect_strings(
            provider.get("headers").unwrap_or(&Value::Null),
            &mut secrets,
        );
        let resolve = |text: &str| resolve_env(text, env);
        let base = match (options.get("baseURL").and_then(Value::as_str), api) {
            (Some(base), _) => resolve(base),
            (None, WireApi::Ollama) => OLLAMA_DEFAULT_BASE.to_owned(),
            (None, _) => {
                return fail(format!(
                    "the provider `{provider_id}` has no options.baseURL: the relay needs the \
                     address of the real model's server"
                ));
            }
        };
        if !base.starts_with("http://") {
            return fail(format!(
                "the provider `{provider_id}`'s options.baseURL is not an http:// address (its \
                 value is not shown: provider options are secrets); the relay speaks plain HTTP \
                 only, as local model servers (Ollama, llama.cpp) do"
            ));
        }
        let path = match api {
            WireApi::OpenAi => "/chat/completions",
            WireApi::Ollama => "/chat",
            WireApi::Responses => "/responses",
            WireApi::Anthropic => "/messages",
            // Gemini names the model in the path: the relay forwards the path it was asked.
            WireApi::Gemini => "",
        };
        let chat_url = format!("{}{path}", base.trim_end_matches('/'));
        let mut headers = HeaderMap::new();
        if let Some(key) = options.get("apiKey").and_then(Value::as_str) {
            let bearer = format!("Bearer {}", resolve(key));
            headers.insert(AUTHORIZATION, header_value(provider_id, "apiKey", &bearer)?);
            secrets.push(bearer);
        }
        for source in [options.get("headers"), provider.get("headers")] {
            let Some(map) = source.and_then(Value::as_object) else {
                continue;
            };
            for (name, value) in map {
                let Some(value) = value.as_str() else {
                    return fail(format!(
                        "the provider `{provider_id}`'s header `{name}` is not a string"
                    ));
                };
                let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                    CassetteError::Upstream(format!(
                        "the provider `{provider_id}`'s header name `{name}` is not a valid \
                         HTTP header name"
                    ))
                })?;
                headers.insert(header, header_value(provider_id, name, &resolve(value))?);
            }
        }
        let resolved: Vec<String> = secrets.iter().map(|s| resolve(s)).collect();
        secrets.extend(resolved);
        // As for the config's own strings: shorter ones cannot be credentials.
        secrets.retain(|s| s.chars().count() >= 4);
        secrets.sort();
        secrets.dedup();
        let model_entry = provider
            .pointer(&format!("/models/{}", pointer_escape(model)))
            .and_then(Value::as_object)
            .map(|entry| {
                let mut entry: Map<String, Value> = entry.clone();
                entry.remove("options");
                entry.remove("headers");
                Value::Object(entry)
            })
            .unwrap_or_else(|| Value::Object(Map::new()));
        Ok(Self {
            provider: provider_id.to_owned(),
            chat_url,
            headers,
            recorded: Recorded {
                api,
                npm,
                model: model.to_owned(),
                model_entry,
            },
            secrets,
        })
    }

    /// `config` pointed at the relay at `relay_base` (`http://127.0.0.1:<port>/v1` or `/api`):
    /// the provider's address replaced, its key a dummy, its headers gone. No credential
    /// reaches OpenCode. A `small_model` of another provider becomes the recorded model, so the
    /// title request goes through the relay too (a replay serves only what was recorded).
    pub(crate) fn relay_config(&self, config: &Value, relay_base: &str) -> Value {
        let mut config = config.clone();
        let own = format!("{}/", self.provider);
        let small = config.get("small_model").and_then(Value::as_str);
        if small.is_some_and(|small| !small.starts_with(&own)) {
            let model = format!("{own}{}", self.recorded.model);
            config["small_model"] = Value::String(model);
        }
        let pointer = format!("/provider/{}", pointer_escape(&self.provider));
        if let Some(provider) = config.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            provider.remove("headers");
            let options = provider
                .entry("options")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(options) = options.as_object_mut() {
                options.insert("baseURL".into(), Value::String(relay_base.to_owned()));
                options.remove("headers");
                if options.contains_key("apiKey") {
                    options.insert("apiKey".into(), Value::String(RELAY_API_KEY.into()));
                }
            }
        }
        config
    }
}

fn header_value(provider: &str, name: &str, value: &str) -> Result<HeaderValue, CassetteError> {
    HeaderValue::from_str(value).map_err(|_| {
        CassetteError::Upstream(format!(
            "the provider `{provider}`'s `{name}` is not a valid HTTP header value (not shown)"
        ))
    })
}

/// OpenCode's `{env:NAME}` substitution: the variable's value, empty when unset.
fn resolve_env(text: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{env:") {
        let Some(len) = rest[start..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        let name = &rest[start + "{env:".len()..start + len];
        out.push_str(&env(name.trim()).unwrap_or_default());
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

fn collect_strings(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if s.chars().count() >= 4 => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// A JSON pointer token for `key` (model names hold `/` and `~` at times).
fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(name: &str) -> Option<String> {
        (name == "CANARY_KEY").then(|| "sk-from-env-0123".to_owned())
    }

    fn config() -> Value {
        json!({
            "model": "local/gemma3:270m",
            "provider": {
                "local": {
                    "npm": "@ai-sdk/openai-compatible",
                    "options": {"baseURL": "http://127.0.0.1:9/v1/", "apiKey": "{env:CANARY_KEY}",
                                "headers": {"X-Canary": "hdr-canary-4567"}},
                    "headers": {"X-Provider": "prov-canary-89"},
                    "models": {"gemma3:270m": {"name": "Gemma", "tool_call": true,
                                               "options": {"temperature": 0}}}
                },
                "other": {"options": {"apiKey": "unrelated"}}
            }
        })
    }

    #[test]
    fn the_models_provider_gives_the_address_credentials_and_entry() {
        let upstream = Upstream::from_config(&config(), &env).unwrap();
        assert_eq!(upstream.chat_url, "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(upstream.headers[AUTHORIZATION], "Bearer sk-from-env-0123");
        assert_eq!(upstream.headers["x-canary"], "hdr-canary-4567");
        assert_eq!(upstream.headers["x-provider"], "prov-canary-89");
        assert_eq!(upstream.recorded.api, WireApi::OpenAi);
        assert_eq!(upstream.recorded.model, "gemma3:270m");
        assert_eq!(
            upstream.recorded.model_entry,
            json!({"name": "Gemma", "tool_call": true})
        );
        for secret in [
            "sk-from-env-0123",
            "{env:CANARY_KEY}",
            "hdr-canary-4567",
            "prov-canary-89",
        ] {
            assert!(upstream.secrets.iter().any(|s| s == secret), "{secret}");
        }
        let debug = format!("{upstream:?}");
        assert!(
            !debug.contains("canary") && !debug.contains("sk-"),
            "{debug}"
        );
    }

    #[test]
    fn the_relay_config_carries_no_credential() {
        let upstream = Upstream::from_config(&config(), &env).unwrap();
        let relayed = upstream.relay_config(&config(), "http://127.0.0.1:5/v1");
        let provider = &relayed["provider"]["local"];
        assert_eq!(provider["options"]["baseURL"], "http://127.0.0.1:5/v1");
        assert_eq!(provider["options"]["apiKey"], RELAY_API_KEY);
        assert!(provider.get("headers").is_none() && provider["options"].get("headers").is_none());
        assert_eq!(relayed["provider"]["other"], config()["provider"]["other"]);
        let mut with_small = config();
        with_small["small_model"] = json!("other/tiny");
        let relayed_small = upstream.relay_config(&with_small, "http://127.0.0.1:5/v1");
        assert_eq!(relayed_small["small_model"], "local/gemma3:270m");
        with_small["small_model"] = json!("local/tiny");
        let relayed_small = upstream.relay_config(&with_small, "http://127.0.0.1:5/v1");
        assert_eq!(relayed_small["small_model"], "local/tiny");
        let text = relayed["provider"]["local"].to_string();
        assert!(
            !text.contains("canary") && !text.contains("{env:"),
            "{text}"
        );
    }

    #[test]
    fn an_ollama_package_means_the_native_api_with_its_default_address() {
        let config = json!({"model": "ol/llama3", "provider": {"ol": {
            "npm": "ollama-ai-provider-v2", "models": {"llama3": {}}}}});
        let upstream = Upstream::from_config(&config, &env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::Ollama);
        assert_eq!(upstream.chat_url, "http://127.0.0.1:11434/api/chat");
        assert!(upstream.headers.is_empty());
    }

    #[test]
    fn unusable_configs_are_errors_that_show_no_option_value() {
        let error = |config: Value| {
            Upstream::from_config(&config, &env)
                .unwrap_err()
                .to_string()
        };
        assert!(error(json!({})).contains("names no `model`"));
        assert!(error(json!({"model": "x"})).contains("not \"<provider>/<model>\""));
        assert!(error(json!({"model": "p/m"})).contains("provider `p`"));
        let no_base =
            json!({"model": "p/m", "provider": {"p": {"options": {"apiKey": "sk-hidden-1"}}}});
        assert!(error(no_base).contains("no options.baseURL"));
        let https = json!({"model": "p/m", "provider": {"p": {"options": {"baseURL": "https://sk-hidden-2.example/v1"}}}});
        let message = error(https);
        assert!(
            message.contains("plain HTTP") && !message.contains("sk-hidden"),
            "{message}"
        );
    }

    #[test]
    fn env_references_are_resolved_and_unset_ones_are_empty() {
        assert_eq!(
            resolve_env("a{env:CANARY_KEY}b{env:NOPE}c", &env),
            "ask-from-env-0123bc"
        );
        assert_eq!(resolve_env("no refs {env:", &env), "no refs {env:");
    }
}
