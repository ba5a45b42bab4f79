//! The real provider a recording relays to, read from the user's OpenCode config.
//!
//! The provider is the one of the config's `model` (`"<provider>/<model>"`): one the config
//! defines, or one of OpenCode's built-in providers ([`crate::providers`]), which needs no entry
//! at all when its key is in its variable (`ANTHROPIC_API_KEY`). Its `npm` decides the API
//! ([`providers::package`]), its `options.baseURL` (else the catalog's or the package's own) the
//! address, `options.apiKey` (else the catalog's key variables) the key, sent upstream in the
//! API's own header, `options.headers` and the provider's `headers` the extra headers.
//! OpenCode's `{env:NAME}` in those strings is resolved. Every such string and every key is a
//! secret: none is shown in an error. Providers whose requests are signed per request (Bedrock,
//! Vertex, Azure) are refused: the relay cannot add such credentials.

use std::fmt;

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::error::CassetteError;
use super::format::{Recorded, WireApi};
use super::https::Roots;
use super::providers::{self, ANTHROPIC_VERSION, KeyHeader, Package};

/// The provider package OpenCode uses when a provider names none.
const DEFAULT_NPM: &str = "@ai-sdk/openai-compatible";
/// The key OpenCode gets instead of the real one while recording (the relay adds the real one).
const RELAY_API_KEY: &str = "cassette-relay";

/// Where and how to reach the real model.
pub(crate) struct Upstream {
    /// The provider's id in the config.
    pub(crate) provider: String,
    /// The API's address (`https://api.anthropic.com/v1`), without a trailing `/`.
    base: String,
    /// The key's header and the configured headers.
    pub(crate) headers: HeaderMap,
    /// What a replay's config needs.
    pub(crate) recorded: Recorded,
    /// Every credential, as configured and as resolved.
    pub(crate) secrets: Vec<String>,
    /// One of OpenCode's built-in providers: its config entry may be missing, its key was
    /// perhaps read from a variable, OpenCode would pick a small model of its own.
    built_in: bool,
    /// The TLS roots the relay trusts, read with the same environment.
    pub(crate) roots: Roots,
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
    /// `{env:NAME}` and key variables with `env`.
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
        let configured = config.pointer(&format!("/provider/{}", pointer_escape(provider_id)));
        let catalog = providers::catalog();
        let built_in = catalog.provider(provider_id);
        let provider = match (configured, built_in) {
            (Some(provider), _) => provider.clone(),
            (None, Some(_)) => Value::Object(Map::new()),
            (None, None) => {
                return fail(format!(
                    "the provider `{provider_id}` of the config's `model` is not among its \
                     providers, nor one of OpenCode {}'s built-in providers ({})",
                    catalog.opencode,
                    catalog.ids().collect::<Vec<_>>().join(", ")
                ));
            }
        };
        let overrides = built_in
            .map(|b| b.model_override(model))
            .unwrap_or_default();
        let npm = provider
            .get("npm")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(overrides.npm.clone())
            .or(built_in.map(|b| b.npm.clone()))
            .unwrap_or_else(|| DEFAULT_NPM.to_owned());
        let options = provider.get("options").cloned().unwrap_or(Value::Null);
        let configured_base = options.get("baseURL").and_then(Value::as_str);
        let (api, default_base) = match providers::package(&npm, overrides.shape.as_deref()) {
            Package::Relayed { api, default_base } => (api, default_base),
            Package::Signed { how } => {
                return fail(format!(
                    "the provider `{provider_id}` ({npm}) cannot be relayed: {how}, and the relay \
                     can only add a fixed key upstream; run its scenarios against the real \
                     provider directly with {}=live (not recorded, not retried), or reach the \
                     same model through a provider with a key (OpenRouter, an OpenAI-compatible \
                     gateway)",
                    crate::settings::CASSETTE
                ));
            }
            // A provider of the user's own with an address: OpenAI chat completions, as most
            // servers speak it.
            Package::Unknown if built_in.is_none() || configured_base.is_some() => {
                (WireApi::OpenAi, None)
            }
            Package::Unknown => {
                return fail(format!(
                    "the relay does not speak the API of `{npm}` (the package of the built-in \
                     provider `{provider_id}`) yet; it speaks {}: run it directly with {}=live, \
                     or configure the provider with npm \"@ai-sdk/openai-compatible\" and its \
                     chat-completions options.baseURL",
                    providers::RELAYED_PACKAGES,
                    crate::settings::CASSETTE
                ));
            }
        };
        let mut secrets = Vec::new();
        collect_strings(&options, &mut secrets);
        collect_strings(
            provider.get("headers").unwrap_or(&Value::Null),
            &mut secrets,
        );
        let resolve = |text: &str| resolve_env(text, env);
        let catalog_base = overrides
            .api
            .as_deref()
            .or(built_in.and_then(|b| b.api.as_deref()));
        let base = match configured_base.map(&resolve) {
            Some(base) => base,
            None => match catalog_base.or(default_base) {
                Some(base) => base.to_owned(),
                None => {
                    return fail(format!(
                        "the provider `{provider_id}` has no options.baseURL: the relay needs the \
                         address of the real model's server"
                    ));
                }
            },
        };
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return fail(format!(
                "the provider `{provider_id}`'s address is not an http:// or https:// address \
                 (its value is not shown: provider options are secrets); fix its \
                 options.baseURL"
            ));
        }
        // A key in the address's query (Google's `key=`) is a secret of its own too.
        secrets.extend(query_keys(&base));
        let mut headers = HeaderMap::new();
        if api == WireApi::Anthropic {
            headers.insert(
                HeaderName::from_static("anthropic-version"),
                HeaderValue::from_static(ANTHROPIC_VERSION),
            );
        }
        let key = match options.get("apiKey").and_then(Value::as_str) {
            Some(key) => Some(resolve(key)),
            None => built_in.and_then(|b| b.env.iter().find_map(|name| env(name))),
        }
        .filter(|key| !key.is_empty());
        if let Some(b) = built_in {
            // Every key variable of the provider that is set, chosen or not.
            secrets.extend(b.env.iter().filter_map(|name| env(name)));
        }
        match (&key, built_in) {
            (Some(key), _) => {
                let (name, value) = match KeyHeader::of(api) {
                    KeyHeader::Bearer => (AUTHORIZATION, format!("Bearer {key}")),
                    KeyHeader::Anthropic => (HeaderName::from_static("x-api-key"), key.clone()),
                    KeyHeader::Google => (HeaderName::from_static("x-goog-api-key"), key.clone()),
                };
                headers.insert(name, header_value(provider_id, "apiKey", &value)?);
                secrets.push(value);
                secrets.push(key.clone());
            }
            // A hosted address wants a key; an address of the user's own (a local LM Studio)
            // may take none.
            (None, Some(b)) if !b.env.is_empty() && configured_base.is_none() => {
                let names = b.env.join(", ");
                return fail(format!(
                    "the provider `{provider_id}` has no key: OpenCode and the relay look for it \
                     in options.apiKey, then in {names}; set {} (its value is never shown)",
                    b.env[0]
                ));
            }
            _ => {}
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
            base: base.trim_end_matches('/').to_owned(),
            headers,
            recorded: Recorded {
                api,
                npm,
                model: model.to_owned(),
                model_entry,
            },
            secrets,
            built_in: built_in.is_some(),
            roots: Roots::from_env(env),
        })
    }

    /// The upstream address of a request the relay received at `path_and_query`: the API's
    /// fixed path, or for Gemini the model and method OpenCode asked for (what follows
    /// `/models/`), with its query less any `key=` (the relay sends the real key in a header).
    pub(crate) fn url(&self, path_and_query: &str) -> String {
        let path = match self.recorded.api {
            WireApi::OpenAi => "/chat/completions",
            WireApi::Ollama => "/chat",
            WireApi::Responses => "/responses",
            WireApi::Anthropic => "/messages",
            WireApi::Gemini => {
                let (path, query) = path_and_query
                    .split_once('?')
                    .unwrap_or((path_and_query, ""));
                let path = path.find("/models/").map_or(path, |at| &path[at..]);
                let query: Vec<&str> = query
                    .split('&')
                    .filter(|pair| !pair.is_empty() && !pair.starts_with("key="))
                    .collect();
                return if query.is_empty() {
                    format!("{}{path}", self.base)
                } else {
                    format!("{}{path}?{}", self.base, query.join("&"))
                };
            }
        };
        format!("{}{path}", self.base)
    }

    /// `config` pointed at the relay at `relay_base` (`http://127.0.0.1:<port>/v1` or `/api`):
    /// the provider's address replaced, its key a dummy, its headers gone. No credential
    /// reaches OpenCode. A `small_model` of another provider becomes the recorded model, so the
    /// title request goes through the relay too (a replay serves only what was recorded); so
    /// does a built-in provider's own small model (OpenCode would pick one the replay lacks).
    pub(crate) fn relay_config(&self, config: &Value, relay_base: &str) -> Value {
        let mut config = config.clone();
        let own = format!("{}/", self.provider);
        let recorded_model = format!("{own}{}", self.recorded.model);
        match config.get("small_model").and_then(Value::as_str) {
            Some(small) if !small.starts_with(&own) => {
                config["small_model"] = Value::String(recorded_model);
            }
            None if self.built_in => {
                if let Some(object) = config.as_object_mut() {
                    object.insert("small_model".into(), Value::String(recorded_model));
                }
            }
            _ => {}
        }
        if self.built_in {
            // A built-in provider named by its key variable alone has no entry to point.
            if let Some(object) = config.as_object_mut() {
                let providers = object
                    .entry("provider")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(providers) = providers.as_object_mut() {
                    providers
                        .entry(self.provider.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                }
            }
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
                // A built-in provider's key may come from a variable OpenCode also reads: the
                // dummy wins over it.
                if self.built_in || options.contains_key("apiKey") {
                    options.insert("apiKey".into(), Value::String(RELAY_API_KEY.into()));
                }
            }
        }
        config
    }
}

/// The API's name, for messages.
fn api_name(api: WireApi) -> &'static str {
    match api {
        WireApi::OpenAi => "OpenAI chat completions",
        WireApi::Ollama => "Ollama chat",
        WireApi::Responses => "OpenAI Responses",
        WireApi::Anthropic => "Anthropic Messages",
        WireApi::Gemini => "Gemini generateContent",
    }
}

/// When a successful answer with `content_type` to a request that asked for a stream (or not)
/// cannot be of `api`: the recording's failure, naming both.
pub(crate) fn answer_mismatch(
    api: WireApi,
    content_type: &str,
    asked_stream: bool,
) -> Option<String> {
    let content_type = content_type.to_ascii_lowercase();
    let sse = content_type.starts_with("text/event-stream");
    let json = content_type.contains("json");
    let fits = match api {
        WireApi::Ollama => json,
        _ if asked_stream => sse,
        _ => json,
    };
    (!fits).then(|| {
        let expected = match api {
            WireApi::Ollama => "JSON lines",
            _ if asked_stream => "an event stream",
            _ => "JSON",
        };
        format!(
            "the provider answered with content-type `{content_type}`, not {expected} of the {}              API the relay expected from its package: check the provider's npm and              options.baseURL (the address must be the API's base, as `https://api.anthropic.com/v1`)",
            api_name(api)
        )
    })
}

/// When the first frame of a stream (`event`, `data`) is of another API than `api`: the
/// recording's failure, naming both.
pub(crate) fn frame_mismatch(api: WireApi, event: Option<&str>, data: &str) -> Option<String> {
    let json: Value = serde_json::from_str(data).unwrap_or(Value::Null);
    let kind = json.get("type").and_then(Value::as_str).or(event);
    let found = match kind {
        Some(kind) if kind.starts_with("response.") => WireApi::Responses,
        Some("message_start" | "content_block_start" | "content_block_delta" | "ping") => {
            WireApi::Anthropic
        }
        _ if json.get("choices").is_some() || data.trim() == "[DONE]" => WireApi::OpenAi,
        _ if json.get("candidates").is_some() => WireApi::Gemini,
        _ if json.get("message").is_some() && json.get("done").is_some() => WireApi::Ollama,
        // An error frame, or a shape this check does not know: not a verdict.
        _ => return None,
    };
    (found != api).then(|| {
        format!(
            "the provider streamed the {} API, not the {} API the relay expected from its              package: set the provider's npm to the package of the API it speaks",
            api_name(found),
            api_name(api)
        )
    })
}

/// The values of `key=` parameters in `url`'s query.
fn query_keys(url: &str) -> Vec<String> {
    let Some((_, query)) = url.split_once('?') else {
        return Vec::new();
    };
    query
        .split('&')
        .filter_map(|pair| pair.strip_prefix("key="))
        .map(str::to_owned)
        .collect()
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
        assert_eq!(
            upstream.url("/v1/chat/completions"),
            "http://127.0.0.1:9/v1/chat/completions"
        );
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
        assert_eq!(upstream.url("/api/chat"), "http://127.0.0.1:11434/api/chat");
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
        let other_scheme = json!({"model": "p/m", "provider": {"p": {"options": {"baseURL": "ftp://sk-hidden-2.example/v1"}}}});
        let message = error(other_scheme);
        assert!(
            message.contains("not an http:// or https:// address")
                && !message.contains("sk-hidden"),
            "{message}"
        );
    }

    /// Every key a test hands out: none may show anywhere but in `secrets` and the headers.
    const CANARIES: [&str; 5] = [
        "sk-ant-canary-0001",
        "sk-oai-canary-0002",
        "goog-canary-0003",
        "sk-or-canary-0004",
        "gw-canary-0005",
    ];

    fn hosted_env(name: &str) -> Option<String> {
        let value = match name {
            "ANTHROPIC_API_KEY" => CANARIES[0],
            "OPENAI_API_KEY" => CANARIES[1],
            "GOOGLE_GENERATIVE_AI_API_KEY" => CANARIES[2],
            "MY_OPENROUTER_KEY" => CANARIES[3],
            "GATEWAY_KEY" => CANARIES[4],
            _ => return None,
        };
        Some(value.to_owned())
    }

    /// `upstream` and its relay config show no key anywhere but where it belongs.
    fn assert_secret_kept(upstream: &Upstream, config: &Value, canary: &str) {
        assert!(upstream.secrets.iter().any(|s| s == canary), "{canary}");
        let debug = format!("{upstream:?}");
        assert!(!debug.contains("canary"), "{debug}");
        let relayed = upstream
            .relay_config(config, "http://127.0.0.1:5/v1")
            .to_string();
        assert!(!relayed.contains("canary"), "{relayed}");
        let recorded = serde_json::to_string(&upstream.recorded).unwrap();
        assert!(!recorded.contains("canary"), "{recorded}");
    }

    #[test]
    fn anthropic_by_its_key_variable_alone_is_relayed_over_https_with_its_headers() {
        let config = json!({"model": "anthropic/claude-sonnet-4-5"});
        let upstream = Upstream::from_config(&config, &hosted_env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::Anthropic);
        assert_eq!(upstream.recorded.npm, "@ai-sdk/anthropic");
        assert_eq!(upstream.recorded.model, "claude-sonnet-4-5");
        assert_eq!(
            upstream.url("/v1/messages"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(upstream.headers["x-api-key"], CANARIES[0]);
        assert_eq!(upstream.headers["anthropic-version"], "2023-06-01");
        assert!(upstream.headers.get(AUTHORIZATION).is_none());
        assert_secret_kept(&upstream, &config, CANARIES[0]);
        // OpenCode gets an entry pointing at the relay, a dummy key that wins over the
        // variable, and the recorded model for its title request too.
        let relayed = upstream.relay_config(&config, "http://127.0.0.1:5/v1");
        assert_eq!(
            relayed["provider"]["anthropic"]["options"],
            json!({"baseURL": "http://127.0.0.1:5/v1", "apiKey": RELAY_API_KEY})
        );
        assert_eq!(relayed["small_model"], "anthropic/claude-sonnet-4-5");
    }

    #[test]
    fn openai_google_and_openrouter_take_their_api_address_and_key_header() {
        let openai = json!({"model": "openai/gpt-5"});
        let upstream = Upstream::from_config(&openai, &hosted_env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::Responses);
        assert_eq!(
            upstream.url("/v1/responses"),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            upstream.headers[AUTHORIZATION],
            format!("Bearer {}", CANARIES[1])
        );
        assert_secret_kept(&upstream, &openai, CANARIES[1]);
        assert!(
            upstream
                .secrets
                .contains(&format!("Bearer {}", CANARIES[1]))
        );

        let google = json!({"model": "google/gemini-2.5-flash"});
        let upstream = Upstream::from_config(&google, &hosted_env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::Gemini);
        assert_eq!(upstream.headers["x-goog-api-key"], CANARIES[2]);
        // The model and method as OpenCode asked; OpenCode's dummy `key=` is not forwarded.
        assert_eq!(
            upstream.url(
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse&key=cassette-relay"
            ),
            "https://generativelanguage.googleapis.com/v1beta/models/\
             gemini-2.5-flash:streamGenerateContent?alt=sse"
        );
        assert_secret_kept(&upstream, &google, CANARIES[2]);

        let openrouter = json!({"model": "openrouter/anthropic/claude-sonnet-4.5",
            "provider": {"openrouter": {"options": {"apiKey": "{env:MY_OPENROUTER_KEY}"}}}});
        let upstream = Upstream::from_config(&openrouter, &hosted_env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::OpenAi);
        assert_eq!(upstream.recorded.model, "anthropic/claude-sonnet-4.5");
        assert_eq!(
            upstream.url("/v1/chat/completions"),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(
            upstream.headers[AUTHORIZATION],
            format!("Bearer {}", CANARIES[3])
        );
        assert_secret_kept(&upstream, &openrouter, CANARIES[3]);
    }

    #[test]
    fn an_https_gateway_of_the_users_own_is_relayed_and_its_query_key_is_a_secret() {
        let config = json!({"model": "gw/some-model", "provider": {"gw": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": "https://gateway.example/v1/?key=gw-query-canary-9",
                        "apiKey": "{env:GATEWAY_KEY}"},
            "models": {"some-model": {}}}}});
        let upstream = Upstream::from_config(&config, &hosted_env).unwrap();
        assert_eq!(upstream.recorded.api, WireApi::OpenAi);
        assert!(
            upstream
                .url("/v1/chat/completions")
                .starts_with("https://gateway.example/v1")
        );
        assert!(upstream.secrets.iter().any(|s| s == "gw-query-canary-9"));
        assert_secret_kept(&upstream, &config, CANARIES[4]);
    }

    #[test]
    fn hosted_providers_that_cannot_be_relayed_say_why_and_show_no_key() {
        let error = |config: Value| {
            Upstream::from_config(&config, &hosted_env)
                .unwrap_err()
                .to_string()
        };
        let missing =
            Upstream::from_config(&json!({"model": "anthropic/claude-sonnet-4-5"}), &|_| None)
                .unwrap_err()
                .to_string();
        assert!(
            missing.contains("`anthropic` has no key") && missing.contains("set ANTHROPIC_API_KEY"),
            "{missing}"
        );
        let google = Upstream::from_config(&json!({"model": "google/gemini-2.5-flash"}), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(google.contains("GOOGLE_GENERATIVE_AI_API_KEY"), "{google}");

        let unknown = error(json!({"model": "nosuch/m"}));
        assert!(
            unknown.contains("provider `nosuch`")
                && unknown.contains("built-in providers (")
                && unknown.contains("anthropic, "),
            "{unknown}"
        );
        for (id, how) in [
            ("amazon-bedrock", "SigV4"),
            ("google-vertex", "OAuth"),
            ("azure", "Azure AD"),
        ] {
            let message = error(json!({"model": format!("{id}/m"),
                "provider": {id: {"options": {"apiKey": "sk-signed-canary"}}}}));
            assert!(
                message.contains(&format!("`{id}`"))
                    && message.contains(how)
                    && message.contains("LIVE_CASSETTE=live")
                    && !message.contains("canary"),
                "{message}"
            );
        }
        let groq = error(json!({"model": "groq/llama-3.3-70b-versatile"}));
        assert!(
            groq.contains("does not speak the API of `@ai-sdk/groq`"),
            "{groq}"
        );
        for message in [missing, unknown, groq] {
            assert!(CANARIES.iter().all(|c| !message.contains(c)), "{message}");
        }
    }

    #[test]
    fn an_answer_of_another_api_is_named_with_the_expected_one() {
        assert_eq!(
            answer_mismatch(WireApi::Anthropic, "text/event-stream; charset=utf-8", true),
            None
        );
        assert_eq!(
            answer_mismatch(WireApi::OpenAi, "application/json", false),
            None
        );
        assert_eq!(
            answer_mismatch(WireApi::Ollama, "application/x-ndjson", true),
            None
        );
        let html = answer_mismatch(WireApi::Anthropic, "text/html", true).unwrap();
        assert!(
            html.contains("`text/html`") && html.contains("Anthropic Messages"),
            "{html}"
        );
        let chat_frame = r#"{"id":"c","object":"chat.completion.chunk","choices":[]}"#;
        let message = frame_mismatch(WireApi::Anthropic, None, chat_frame).unwrap();
        assert!(
            message
                .contains("streamed the OpenAI chat completions API, not the Anthropic Messages"),
            "{message}"
        );
        let start = r#"{"type":"message_start","message":{}}"#;
        assert_eq!(
            frame_mismatch(WireApi::Anthropic, Some("message_start"), start),
            None
        );
        assert!(frame_mismatch(WireApi::Responses, Some("message_start"), start).is_some());
        let created = r#"{"type":"response.created"}"#;
        assert_eq!(
            frame_mismatch(WireApi::Responses, Some("response.created"), created),
            None
        );
        assert_eq!(
            frame_mismatch(WireApi::Gemini, None, r#"{"candidates":[]}"#),
            None
        );
        assert_eq!(frame_mismatch(WireApi::OpenAi, None, chat_frame), None);
        assert_eq!(frame_mismatch(WireApi::OpenAi, Some("error"), "{}"), None);
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
