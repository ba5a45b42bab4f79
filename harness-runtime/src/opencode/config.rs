//! Which `OPENCODE_CONFIG_CONTENT` an agent gets, and which of its values are secrets.

use std::ffi::OsString;
use std::sync::Arc;

use serde_json::Value;

use super::{AgentOptions, ProvisionError};
use crate::cassette::{self, CassetteError, ModelPlan};
use crate::model::ModelSlot;
use crate::redact::Redactor;
use crate::scenario::ScenarioOptions;

/// The variable a real-model scenario supplies (and declares in `requires`).
pub(crate) use crate::settings::CONFIG_CONTENT as CONFIG_ENV;

/// The model side of an agent's config, per the scenario's [`ModelPlan`]: the scenario's
/// [`ModelSlot`], or a stand-in in tests.
pub(crate) trait ModelConfigs {
    /// How the scenario's model is served.
    fn plan(&self) -> &ModelPlan;
    /// The config of the scripted model, with `permission`.
    fn scripted(&mut self, permission: Value) -> Value;
    /// The config of the cassette's replay, with `permission`.
    fn replay(
        &mut self,
        permission: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError>;
    /// `user_config` pointed at the recording relay.
    fn record(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError>;
    /// `user_config` pointed at a relay that records nothing (live: retries and timing);
    /// [`CassetteError::Upstream`] when the provider cannot be relayed.
    fn live(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError>;
}

impl ModelConfigs for ModelSlot {
    fn plan(&self) -> &ModelPlan {
        ModelSlot::plan(self)
    }

    fn scripted(&mut self, permission: Value) -> Value {
        self.opencode_config(permission)
    }

    fn replay(
        &mut self,
        permission: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError> {
        cassette::replay_config(self, permission, redactor)
    }

    fn record(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError> {
        cassette::record_config(self, user_config, redactor)
    }

    fn live(
        &mut self,
        user_config: Value,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, CassetteError> {
        cassette::live_config(self, user_config, redactor)
    }
}

/// Where the config comes from: the options' explicit `config` first (while recording, it is
/// the upstream the relay records from, as the user's config would be); else the scenario's
/// model plan: the scripted model, the user's config (`OPENCODE_CONFIG_CONTENT`) through a relay
/// that records nothing (live), that config through the recording relay (record), or the
/// cassette's replay. The options'
/// `product_config` is layered over it ([`config_layer`](super::config_layer)).
pub(crate) fn choose(
    options: &AgentOptions,
    scenario: &ScenarioOptions,
    name: &str,
    model: &mut impl ModelConfigs,
    redactor: &Arc<Redactor>,
) -> Result<Value, ProvisionError> {
    let chosen = choose_with(
        options,
        scenario,
        name,
        model,
        redactor,
        crate::settings::raw,
    )?;
    let mut config = with_product(chosen, options)?;
    snapshots_off_unless_set(&mut config);
    Ok(config)
}

/// `config` with the options' product settings layered over it, if any.
fn with_product(config: Value, options: &AgentOptions) -> Result<Value, ProvisionError> {
    match &options.product_config {
        Some(product) => super::config_layer::layer(&config, product),
        None => Ok(config),
    }
}

/// Every workspace is a git repository (its own OpenCode project), which would switch on
/// OpenCode's per-step git snapshots: a `git` run per step and `patch` parts that a plain
/// directory never had. Off, as outside a repository, unless the config sets `snapshot`.
fn snapshots_off_unless_set(config: &mut Value) {
    if let Some(object) = config.as_object_mut() {
        object.entry("snapshot").or_insert(Value::Bool(false));
    }
}

/// [`choose`] with the environment given.
fn choose_with(
    options: &AgentOptions,
    scenario: &ScenarioOptions,
    name: &str,
    model: &mut impl ModelConfigs,
    redactor: &Arc<Redactor>,
    lookup: impl Fn(&str) -> Option<OsString>,
) -> Result<Value, ProvisionError> {
    let recording = matches!(model.plan(), ModelPlan::Record { .. });
    if let (Some(config), false) = (&options.config, recording) {
        return Ok(config.clone());
    }
    let permission = options.permission.clone();
    match model.plan().clone() {
        ModelPlan::Scripted => Ok(model.scripted(permission)),
        ModelPlan::Live => {
            let config = user_config(options, scenario, &lookup)?;
            register_secrets(&config, redactor);
            register_key_variables(&config, redactor, &|name| {
                lookup(name).and_then(|v| v.into_string().ok())
            });
            match model.live(config.clone(), redactor) {
                Ok(relayed) => Ok(relayed),
                // A provider the relay cannot take (signed per request, an API it does not
                // speak), or a config naming no model: talked to directly, without the relay's
                // retries and timing.
                Err(CassetteError::Upstream(why)) => {
                    let line = format!(
                        "model: live, directly (the relay cannot take this provider: {why}): \
                         429 and 5xx answers are not retried, turns are not timed"
                    );
                    crate::progress::progress(name, &redactor.redact(&line));
                    Ok(config)
                }
                Err(error) => Err(cassette_error(Cassette::Live, &error, name, redactor)),
            }
        }
        ModelPlan::Record { .. } => {
            // An explicit config is taken as it is (a tool building cassettes names its own
            // upstream); else the user's, adapted to the scenario.
            let config = match &options.config {
                Some(config) => config.clone(),
                None => user_config(options, scenario, &lookup)?,
            };
            // The config handed on has its credentials removed: register them while they show.
            register_secrets(&config, redactor);
            register_key_variables(&config, redactor, &|name| {
                lookup(name).and_then(|v| v.into_string().ok())
            });
            model
                .record(config, redactor)
                .map_err(|e| cassette_error(Cassette::Record, &e, name, redactor))
        }
        ModelPlan::Replay { .. } => model
            .replay(permission, redactor)
            .map_err(|e| cassette_error(Cassette::Replay, &e, name, redactor)),
    }
}

/// The user's config of `OPENCODE_CONFIG_CONTENT`, adapted to the scenario.
fn user_config(
    options: &AgentOptions,
    scenario: &ScenarioOptions,
    lookup: &impl Fn(&str) -> Option<OsString>,
) -> Result<Value, ProvisionError> {
    let raw = crate::requirements::value_with(CONFIG_ENV, lookup)
        .map_err(|unmet| ProvisionError::Config(format!("{unmet} (required by the scenario)")))?;
    // serde_json's message names a line and column, never the content.
    let mut config: Value = serde_json::from_str(&raw)
        .map_err(|e| ProvisionError::Config(format!("{CONFIG_ENV} is not valid JSON: {e}")))?;
    // A `cassette` scenario's real model is implied; others name it in `requires`.
    let names_model = scenario.cassette || scenario.requires.contains(&MODEL_ENV);
    let model = match crate::requirements::value_with(MODEL_ENV, lookup) {
        Ok(model) if names_model => Some(model),
        _ => None,
    };
    let env = |name: &str| lookup(name).and_then(|v| v.into_string().ok());
    adapt_user_config(&mut config, model.as_deref(), &options.permission, &env)?;
    Ok(config)
}

/// Which side of a cassette failed.
#[derive(Clone, Copy)]
enum Cassette {
    Replay,
    Record,
    Live,
}

/// An error of a cassette plan, redacted, with what to do about it.
fn cassette_error(
    side: Cassette,
    error: &CassetteError,
    name: &str,
    redactor: &Redactor,
) -> ProvisionError {
    let (what, advice) = match side {
        Cassette::Replay => (
            "replay",
            format!(
                "fix the cassette or record it again with `{}`, or run the real model without \
                 it with {}=live",
                cassette::rerecord_command(name),
                crate::settings::CASSETTE,
            ),
        ),
        Cassette::Live => (
            "relay",
            format!(
                "check the provider {MODEL_ENV} names in {CONFIG_ENV} (its `npm` package and \
                 `options.baseURL`)"
            ),
        ),
        Cassette::Record => (
            "record",
            format!(
                "check the provider {MODEL_ENV} names in {CONFIG_ENV} (its `npm` package and \
                 `options.baseURL`), or run the real model without recording with {}=live",
                crate::settings::CASSETTE,
            ),
        ),
    };
    ProvisionError::Cassette {
        what,
        message: redactor.redact(&error.to_string()),
        advice: redactor.redact(&advice),
    }
}

/// The variable naming the real model among the config's providers.
pub(crate) use crate::settings::MODEL as MODEL_ENV;

/// Makes the user's config serve a scenario: the scenario's permission policy, the harness's
/// hermetic switches, and `model` pointing at `TEST_OLLAMA_MODEL`: a bare name among the
/// config's providers' models, or OpenCode's `provider/model`, whose provider is one of the
/// config's or one of OpenCode's built-in providers ([`crate::providers`], which need no
/// `models` list, their key read from `options.apiKey` or their variables through `env`).
/// Errors name models, providers and variables, never option or key values (secrets).
fn adapt_user_config(
    config: &mut Value,
    model: Option<&str>,
    permission: &Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ProvisionError> {
    let Some(object) = config.as_object_mut() else {
        return Err(ProvisionError::Config(format!(
            "{CONFIG_ENV} must be a JSON object"
        )));
    };
    if let Some(model) = model {
        let named = resolve_model(object, model, env)?;
        object.insert("model".into(), Value::String(named));
    }
    object.insert("permission".into(), permission.clone());
    object.insert("autoupdate".into(), Value::Bool(false));
    object.insert("share".into(), Value::String("disabled".into()));
    Ok(())
}

/// How many of a built-in provider's models an error lists.
const SHOWN_MODELS: usize = 12;

/// `"<provider>/<model>"` for the `model` of `TEST_OLLAMA_MODEL`, checked against `config`'s
/// providers and OpenCode's catalog.
fn resolve_model(
    config: &serde_json::Map<String, Value>,
    model: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ProvisionError> {
    let catalog = crate::cassette::providers::catalog();
    let providers = config.get("provider").and_then(Value::as_object);
    let configured_models = |id: &str| -> Vec<String> {
        providers
            .and_then(|p| p.get(id))
            .and_then(|p| p.get("models"))
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let found = || -> String {
        let found: Vec<String> = providers
            .map(|providers| {
                providers
                    .keys()
                    .map(|id| format!("{id}: [{}]", configured_models(id).join(", ")))
                    .collect()
            })
            .unwrap_or_default();
        if found.is_empty() {
            "no providers".to_string()
        } else {
            found.join("; ")
        }
    };
    // `provider/model`, when `provider` is the config's or a built-in one (a bare name may hold
    // `/` too: `hf.co/org/model` of an Ollama provider).
    if let Some((id, name)) = model.split_once('/') {
        let configured = providers.and_then(|p| p.get(id));
        let built_in = catalog.provider(id);
        if configured.is_some() || built_in.is_some() {
            let listed = configured_models(id);
            let known = listed.iter().any(|m| m == name)
                || built_in.is_some_and(|b| b.has_model(name))
                // A provider of the user's own with no `models` list: its server decides.
                || (built_in.is_none() && listed.is_empty());
            if !known {
                let mut models: Vec<&str> = listed.iter().map(String::as_str).collect();
                if let Some(b) = built_in {
                    models.extend(b.models.iter().map(String::as_str));
                }
                let more = models.len().saturating_sub(SHOWN_MODELS);
                models.truncate(SHOWN_MODELS);
                let more = if more > 0 {
                    format!(", and {more} more")
                } else {
                    String::new()
                };
                return Err(ProvisionError::Config(format!(
                    "the model `{name}` named by {MODEL_ENV} (`{model}`) is not among the models \
                     of the provider `{id}` ({}; looked in {CONFIG_ENV}'s provider.{id}.models{}) \
                     (found: {}{more}); fix {MODEL_ENV} or add the model under \
                     provider.{id}.models",
                    if built_in.is_some() {
                        "an OpenCode built-in provider"
                    } else {
                        "a provider of the config"
                    },
                    if built_in.is_some() {
                        format!(" and OpenCode {}'s models catalog", catalog.opencode)
                    } else {
                        String::new()
                    },
                    models.join(", "),
                )));
            }
            if let Some(b) = built_in {
                check_key(b, configured, env)?;
            }
            return Ok(model.to_owned());
        }
    }
    let owner = providers.and_then(|providers| {
        providers.iter().find_map(|(id, provider)| {
            provider
                .get("models")
                .and_then(Value::as_object)
                .filter(|models| models.contains_key(model))
                .map(|_| id.clone())
        })
    });
    if let Some(provider) = owner {
        return Ok(format!("{provider}/{model}"));
    }
    // A bare name of a built-in provider's model: say how to name it.
    // Those whose key is set first: the one the user most likely means.
    let mut built_in: Vec<(bool, &str)> = catalog
        .ids()
        .filter_map(|id| catalog.provider(id).filter(|p| p.has_model(model)))
        .map(|p| (!p.env.iter().any(|name| env(name).is_some()), p.id.as_str()))
        .collect();
    built_in.sort();
    let built_in: Vec<&str> = built_in.into_iter().take(5).map(|(_, id)| id).collect();
    let hint = match (model.split_once('/'), built_in.first()) {
        (Some((id, _)), _) => format!(
            "; `{id}` is neither one of its providers nor one of OpenCode {}'s built-in \
             providers ({})",
            catalog.opencode,
            catalog.ids().collect::<Vec<_>>().join(", ")
        ),
        (None, Some(first)) => format!(
            "; it is a model of OpenCode's built-in provider(s) {}: name it as \
             `{first}/{model}`",
            built_in.join(", ")
        ),
        (None, None) => "; a model of one of OpenCode's built-in providers is named as \
             `provider/model` (`anthropic/claude-sonnet-4-5`), its key in the provider's \
             variable (ANTHROPIC_API_KEY) or options.apiKey"
            .to_owned(),
    };
    Err(ProvisionError::Config(format!(
        "the model `{model}` named by {MODEL_ENV} is not among the models of {CONFIG_ENV}'s \
         providers (found: {}){hint}; add it under provider.<id>.models or fix {MODEL_ENV}",
        found()
    )))
}

/// A built-in provider at its hosted address needs its key: in `options.apiKey`, or in one of
/// the variables OpenCode reads for it. Providers signed per request (their own credentials)
/// and addresses of the user's own are not checked.
fn check_key(
    provider: &crate::cassette::providers::CatalogProvider,
    configured: Option<&Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ProvisionError> {
    let options = configured.and_then(|c| c.get("options"));
    let has = |key: &str| options.is_some_and(|o| o.get(key).is_some());
    let npm = configured
        .and_then(|c| c.get("npm"))
        .and_then(Value::as_str)
        .unwrap_or(&provider.npm);
    let relayed = matches!(
        crate::cassette::providers::package(npm, None),
        crate::cassette::providers::Package::Relayed { .. }
    );
    if !relayed || has("apiKey") || has("baseURL") || provider.env.is_empty() {
        return Ok(());
    }
    if provider
        .env
        .iter()
        .any(|name| env(name).is_some_and(|v| !v.is_empty()))
    {
        return Ok(());
    }
    Err(ProvisionError::Config(format!(
        "the provider `{}` of {MODEL_ENV} has no key: OpenCode looks for it in \
         provider.{}.options.apiKey of {CONFIG_ENV}, then in {}; set {}",
        provider.id,
        provider.id,
        provider.env.join(", "),
        provider.env[0],
    )))
}

/// Registers the values of the key variables of `config`'s model's built-in provider as
/// secrets of `redactor` (whatever their names: `GEMINI_API_KEY` is caught by its name, a
/// gateway's own variable might not be).
fn register_key_variables(
    config: &Value,
    redactor: &Redactor,
    env: &dyn Fn(&str) -> Option<String>,
) {
    let provider = config
        .get("model")
        .and_then(Value::as_str)
        .and_then(|m| m.split_once('/'))
        .and_then(|(id, _)| crate::cassette::providers::catalog().provider(id));
    for name in provider.iter().flat_map(|p| p.env.iter()) {
        if let Some(value) = env(name) {
            redactor.add_secret(&value);
        }
    }
}

/// Registers every credential of `config` ([`config_layer::secrets`](super::config_layer::secrets))
/// as a secret of `redactor`.
pub(crate) fn register_secrets(config: &Value, redactor: &Redactor) {
    for secret in super::config_layer::secrets(config) {
        redactor.add_secret(&secret);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelError;
    use serde_json::json;

    #[test]
    fn a_real_model_must_be_among_the_providers_models_and_errors_show_no_secret() {
        let mut config = json!({"provider": {"ollama": {
            "options": {"apiKey": "sk-canary-123456"},
            "models": {"gemma3:270m": {}}
        }}});
        let error = adapt_user_config(&mut config.clone(), Some("qwen"), &json!({}), &|_| None)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`qwen`") && error.contains("ollama: [gemma3:270m]"),
            "{error}"
        );
        assert!(!error.contains("sk-canary"), "{error}");
        adapt_user_config(
            &mut config,
            Some("gemma3:270m"),
            &json!({"bash": "ask"}),
            &|_| None,
        )
        .unwrap();
        assert_eq!(config["model"], "ollama/gemma3:270m");
        assert_eq!(config["permission"], json!({"bash": "ask"}));
    }

    fn keys(name: &str) -> Option<String> {
        match name {
            "ANTHROPIC_API_KEY" => Some("sk-ant-canary-4242".into()),
            "GEMINI_API_KEY" => Some("goog-canary-4343".into()),
            _ => None,
        }
    }

    fn adapted(config: Value, model: &str) -> Result<Value, String> {
        let mut config = config;
        adapt_user_config(&mut config, Some(model), &json!({}), &keys)
            .map(|()| config)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn a_provider_slash_model_names_a_built_in_provider_configured_as_opencode_documents_it() {
        // The key in its variable, no entry at all.
        let config = adapted(json!({}), "anthropic/claude-sonnet-4-5").unwrap();
        assert_eq!(config["model"], "anthropic/claude-sonnet-4-5");
        // An entry with options only (no `models`, no `baseURL`); Google's third variable.
        let config = adapted(
            json!({"provider": {"google": {"options": {"timeout": 60000}}}}),
            "google/gemini-2.5-flash",
        )
        .unwrap();
        assert_eq!(config["model"], "google/gemini-2.5-flash");
        let config = adapted(
            json!({"provider": {"openrouter": {"options": {"apiKey": "{env:MINE}"}}}}),
            "openrouter/anthropic/claude-sonnet-4.5",
        )
        .unwrap();
        assert_eq!(config["model"], "openrouter/anthropic/claude-sonnet-4.5");
        // The config's own provider by `provider/model`, and its bare name, as before.
        let own = json!({"provider": {"local": {"models": {"gemma3:270m": {}}}}});
        assert_eq!(
            adapted(own.clone(), "local/gemma3:270m").unwrap()["model"],
            "local/gemma3:270m"
        );
        assert_eq!(
            adapted(own, "gemma3:270m").unwrap()["model"],
            "local/gemma3:270m"
        );
    }

    #[test]
    fn unknown_models_providers_and_missing_keys_say_where_they_were_looked_for() {
        let unknown_model = adapted(json!({}), "anthropic/claude-nonesuch").unwrap_err();
        assert!(
            unknown_model.contains("`claude-nonesuch`")
                && unknown_model.contains("OpenCode 1.18.33's models catalog")
                && unknown_model.contains("claude-sonnet-4-5"),
            "{unknown_model}"
        );
        let unknown_provider = adapted(json!({}), "nosuch/m").unwrap_err();
        assert!(
            unknown_provider.contains(
                "`nosuch` is neither one of its providers nor one of \
                 OpenCode 1.18.33's built-in providers ("
            ) && unknown_provider.contains("anthropic, "),
            "{unknown_provider}"
        );
        let no_key = adapted(json!({}), "openai/gpt-5").unwrap_err();
        assert!(
            no_key.contains("the provider `openai` of TEST_OLLAMA_MODEL has no key")
                && no_key.contains("provider.openai.options.apiKey")
                && no_key.ends_with("set OPENAI_API_KEY"),
            "{no_key}"
        );
        let bare = adapted(json!({}), "claude-sonnet-4-5").unwrap_err();
        assert!(
            bare.contains(
                "the model `claude-sonnet-4-5` named by TEST_OLLAMA_MODEL is not among the \
                 models of OPENCODE_CONFIG_CONTENT's providers (found: no providers)"
            ) && bare.contains("name it as `anthropic/claude-sonnet-4-5`"),
            "{bare}"
        );
        for message in [unknown_model, unknown_provider, no_key, bare] {
            assert!(!message.contains("canary"), "{message}");
        }
    }

    #[test]
    fn the_built_in_providers_key_variables_are_secrets() {
        let redactor = Redactor::for_scenario();
        register_key_variables(
            &json!({"model": "google/gemini-2.5-flash"}),
            &redactor,
            &keys,
        );
        assert_eq!(redactor.redact("k=goog-canary-4343"), "k=[secret]");
    }

    /// A stand-in for the slot: says which of its configs was asked for, with what.
    struct Configs {
        plan: ModelPlan,
        fail: bool,
        /// Live: the relay takes the provider (else it is talked to directly).
        relays: bool,
        asked: Vec<(&'static str, Value)>,
    }

    impl Configs {
        fn new(plan: ModelPlan) -> Self {
            Configs {
                plan,
                fail: false,
                relays: false,
                asked: Vec::new(),
            }
        }
    }

    impl ModelConfigs for Configs {
        fn plan(&self) -> &ModelPlan {
            &self.plan
        }

        fn scripted(&mut self, permission: Value) -> Value {
            self.asked.push(("scripted", permission.clone()));
            json!({"scripted": permission})
        }

        fn replay(&mut self, permission: Value, _: &Arc<Redactor>) -> Result<Value, CassetteError> {
            self.asked.push(("replay", permission.clone()));
            if self.fail {
                return Err(ModelError::Stopped {
                    what: "loading /home/someone/crate/cassettes/probes__basic_turn.json".into(),
                }
                .into());
            }
            Ok(json!({"replay": permission}))
        }

        fn record(&mut self, user: Value, _: &Arc<Redactor>) -> Result<Value, CassetteError> {
            self.asked.push(("record", user.clone()));
            if self.fail {
                return Err(ModelError::Stopped {
                    what: "relaying to sk-canary-123456".into(),
                }
                .into());
            }
            Ok(json!({"recording": true}))
        }

        fn live(&mut self, user: Value, _: &Arc<Redactor>) -> Result<Value, CassetteError> {
            self.asked.push(("live", user));
            if self.relays {
                Ok(json!({"relayed": true}))
            } else {
                Err(CassetteError::Upstream("an https:// provider".into()))
            }
        }
    }

    const USER_CONFIG: &str = r#"{"provider": {"ollama": {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"apiKey": "sk-canary-123456", "baseURL": "http://10.0.0.1/v1"},
        "models": {"gemma3:270m": {}}
    }}}"#;

    fn user_env() -> impl Fn(&str) -> Option<OsString> {
        |var| match var {
            "OPENCODE_CONFIG_CONTENT" => Some(USER_CONFIG.into()),
            "TEST_OLLAMA_MODEL" => Some("gemma3:270m".into()),
            _ => None,
        }
    }

    const CASSETTE: ScenarioOptions = ScenarioOptions {
        cassette: true,
        ..ScenarioOptions::DEFAULT
    };

    fn choose_in(
        options: &AgentOptions,
        scenario: &ScenarioOptions,
        configs: &mut Configs,
        redactor: &Arc<Redactor>,
    ) -> Result<Value, ProvisionError> {
        choose_with(
            options,
            scenario,
            "probes::basic_turn",
            configs,
            redactor,
            user_env(),
        )
    }

    #[test]
    fn an_explicit_config_wins_and_is_what_a_recording_relays() {
        let redactor = Arc::new(Redactor::for_scenario());
        let options = AgentOptions::default().config(json!({"a": 1}));
        for plan in [
            ModelPlan::Scripted,
            ModelPlan::Live,
            ModelPlan::Replay {
                path: "c.json".into(),
            },
        ] {
            let mut configs = Configs::new(plan);
            let config = choose_in(&options, &CASSETTE, &mut configs, &redactor).unwrap();
            assert_eq!(config, json!({"a": 1}));
            assert!(configs.asked.is_empty());
        }
        // Recording relays whatever config the agent gets: the explicit one names the upstream,
        // and no variable is read.
        let explicit = json!({"provider": {"x": {"options": {"apiKey": "sk-explicit-0123"}}}});
        let mut record = Configs::new(ModelPlan::Record {
            path: "c.json".into(),
        });
        let relayed = choose_with(
            &AgentOptions::default().config(explicit.clone()),
            &CASSETTE,
            "probes::basic_turn",
            &mut record,
            &redactor,
            |var: &str| -> Option<OsString> { panic!("{var} was read to record") },
        )
        .unwrap();
        assert_eq!(relayed, json!({"recording": true}));
        assert_eq!(record.asked, [("record", explicit)]);
        assert_eq!(redactor.redact("sk-explicit-0123"), "[secret]");

        let options = AgentOptions::default().permission(json!("ask"));
        let mut configs = Configs::new(ModelPlan::Scripted);
        assert_eq!(
            choose_in(&options, &ScenarioOptions::DEFAULT, &mut configs, &redactor).unwrap(),
            json!({"scripted": "ask"})
        );
    }

    #[test]
    fn each_plan_gets_its_config() {
        let redactor = Arc::new(Redactor::for_scenario());
        let options = AgentOptions::default().permission(json!({"bash": "ask"}));

        // Live: the user's config, adapted; the model is implied by `cassette`. Handed to the
        // relay, and as it is when the relay cannot take its provider.
        let mut live = Configs::new(ModelPlan::Live);
        let config = choose_in(&options, &CASSETTE, &mut live, &redactor).unwrap();
        assert_eq!(config["model"], "ollama/gemma3:270m");
        assert_eq!(config["permission"], json!({"bash": "ask"}));
        assert_eq!(live.asked, [("live", config.clone())]);
        let mut relayed = Configs::new(ModelPlan::Live);
        relayed.relays = true;
        assert_eq!(
            choose_in(&options, &CASSETTE, &mut relayed, &redactor).unwrap(),
            json!({"relayed": true})
        );
        assert_eq!(relayed.asked, [("live", config.clone())]);

        // Record: the same adapted config, handed to the relay; its secrets registered first.
        let mut record = Configs::new(ModelPlan::Record {
            path: "c.json".into(),
        });
        let recorded = choose_in(&options, &CASSETTE, &mut record, &redactor).unwrap();
        assert_eq!(recorded, json!({"recording": true}));
        assert_eq!(record.asked.len(), 1);
        assert_eq!(record.asked[0].0, "record");
        assert_eq!(record.asked[0].1, config);
        assert_eq!(redactor.redact("sk-canary-123456"), "[secret]");

        // Replay: the slot's config with the scenario's permission; no user config read.
        let mut replay = Configs::new(ModelPlan::Replay {
            path: "c.json".into(),
        });
        let replayed = choose_with(
            &options,
            &CASSETTE,
            "probes::basic_turn",
            &mut replay,
            &redactor,
            |var: &str| -> Option<OsString> { panic!("{var} was read to replay") },
        )
        .unwrap();
        assert_eq!(replayed, json!({"replay": {"bash": "ask"}}));
    }

    /// Without `cassette`, the model is taken only when the scenario requires it (as before).
    #[test]
    fn live_without_cassette_names_the_model_only_when_required() {
        let redactor = Arc::new(Redactor::for_scenario());
        let only_config = ScenarioOptions {
            requires: &["OPENCODE_CONFIG_CONTENT"],
            ..ScenarioOptions::DEFAULT
        };
        let mut live = Configs::new(ModelPlan::Live);
        let config =
            choose_in(&AgentOptions::default(), &only_config, &mut live, &redactor).unwrap();
        assert_eq!(config.get("model"), None);
        let both = ScenarioOptions {
            requires: &["TEST_OLLAMA_MODEL", "OPENCODE_CONFIG_CONTENT"],
            ..ScenarioOptions::DEFAULT
        };
        let config = choose_in(&AgentOptions::default(), &both, &mut live, &redactor).unwrap();
        assert_eq!(config["model"], "ollama/gemma3:270m");
    }

    #[test]
    fn cassette_errors_say_what_to_do_and_show_no_secret() {
        let redactor = Arc::new(Redactor::for_scenario());
        redactor.add_path(std::path::Path::new("/home/someone/crate"), "[crate]");
        let mut replay = Configs::new(ModelPlan::Replay {
            path: "c.json".into(),
        });
        replay.fail = true;
        let error =
            choose_in(&AgentOptions::default(), &CASSETTE, &mut replay, &redactor).unwrap_err();
        assert!(matches!(
            error,
            ProvisionError::Cassette { what: "replay", .. }
        ));
        let text = error.to_string();
        assert!(
            text.starts_with(
                "could not replay the cassette: scripted model: stopped while loading \
                 [crate]/cassettes/probes__basic_turn.json; fix the cassette or record it again \
                 with `LIVE_CASSETTE=record cargo test --test "
            ),
            "{text}"
        );
        assert!(
            text.ends_with(
                " -- probes::basic_turn --exact`, or run the real model without it with \
                 LIVE_CASSETTE=live"
            ),
            "{text}"
        );

        let mut record = Configs::new(ModelPlan::Record {
            path: "c.json".into(),
        });
        record.fail = true;
        let error = choose_in(&AgentOptions::default(), &CASSETTE, &mut record, &redactor)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(
                "could not record the cassette: scripted model: stopped while relaying to \
                 [secret]; check the provider TEST_OLLAMA_MODEL names in OPENCODE_CONFIG_CONTENT"
            ),
            "{error}"
        );
        assert!(!error.contains("sk-canary"), "{error}");
    }

    /// The product's settings go over whatever config the plan chose, and a setting breaking
    /// that config's wiring is refused, whichever it is.
    #[test]
    fn a_product_config_is_layered_over_every_plan() {
        let redactor = Arc::new(Redactor::for_scenario());
        let options = AgentOptions::default()
            .permission(json!({"*": "allow"}))
            .product_config(json!({"permission": {"bash": "ask"}}))
            .product_config(json!({"instructions": ["RULES.md"]}));
        let mut live = Configs::new(ModelPlan::Live);
        let chosen = choose_in(&options, &CASSETTE, &mut live, &redactor).unwrap();
        let config = with_product(chosen, &options).unwrap();
        assert_eq!(config["permission"], json!({"*": "allow", "bash": "ask"}));
        assert_eq!(config["instructions"], json!(["RULES.md"]));
        assert_eq!(config["model"], "ollama/gemma3:270m");

        let breaking = AgentOptions::default().product_config(json!({"enabled_providers": []}));
        let chosen = choose_in(&breaking, &CASSETTE, &mut live, &redactor).unwrap();
        let error = with_product(chosen, &breaking).unwrap_err().to_string();
        assert!(
            error.starts_with(
                "the product config cannot set `enabled_providers`: it leaves out `ollama`, the \
                 provider of the scenario's model `ollama/gemma3:270m`"
            ),
            "{error}"
        );
        // An explicit config is wired by what it names.
        let explicit = AgentOptions::default()
            .config(json!({"provider": {"x": {}}, "model": "x/m"}))
            .product_config(json!({"provider": {"x": {"name": "mine"}}}));
        let mut scripted = Configs::new(ModelPlan::Scripted);
        let chosen = choose_in(&explicit, &CASSETTE, &mut scripted, &redactor).unwrap();
        let error = with_product(chosen, &explicit).unwrap_err();
        assert!(
            matches!(&error, ProvisionError::ProductConfig { key, .. } if key == "provider.x"),
            "{error}"
        );
    }

    #[test]
    fn mcp_headers_environment_and_oauth_are_secrets() {
        let redactor = Redactor::for_scenario();
        register_secrets(
            &json!({"mcp": {
                "remote": {"type": "remote", "url": "http://visible.example/mcp",
                           "headers": {"Authorization": "Bearer mcp-token"},
                           "oauth": {"clientSecret": "mcp-client-secret"}},
                "local": {"type": "local", "command": ["node", "tool.js"],
                          "environment": {"TOOL_KEY": "tool-key-123"}}
            }}),
            &redactor,
        );
        let text = redactor.redact(
            "Bearer mcp-token mcp-client-secret tool-key-123 http://visible.example/mcp tool.js",
        );
        assert_eq!(
            text,
            "[secret] [secret] [secret] http://visible.example/mcp tool.js"
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
