//! The product's own OpenCode settings ([`AgentOptions::product_config`]) layered over the
//! config the harness builds for the scenario's model.
//!
//! OpenCode 1.18.33 merges its config sources itself, lowest first: the global config
//! (`$XDG_CONFIG_HOME/opencode/opencode.json`), the project's `opencode.json` then
//! `opencode.jsonc` (from the directory up to the project's work tree), `.opencode/opencode.json`
//! then `.opencode/opencode.jsonc`, then `OPENCODE_CONFIG_CONTENT`. Objects merge key by key,
//! anything else is replaced by the later source, and `instructions` lists are joined. The
//! product's layer is merged here the same way into the one config the harness hands OpenCode
//! at the top (`OPENCODE_CONFIG_CONTENT` on a server of the scenario's own, the workspace's
//! `.opencode/opencode.jsonc` on a shared one), so what the product configures outranks a project
//! file as it would from the product's own `OPENCODE_CONFIG_CONTENT`.
//!
//! The model wiring stays the harness's: a product setting that would take the scenario's
//! model away from OpenCode is an error naming the key, before anything starts. Where a
//! config keeps credentials ([`secrets`]) decides what is redacted and what may be written to
//! a shared server's workspace.
//!
//! [`AgentOptions::product_config`]: super::AgentOptions::product_config

use serde_json::{Map, Value};

use super::ProvisionError;
use super::models_catalog::ModelsCatalog;

/// Top-level lists OpenCode joins across its sources instead of replacing them.
const JOINED_LISTS: [&str; 2] = ["instructions", "plugin"];
/// Where a model is named per agent or command: `<section>.<name>.model`.
const MODEL_SECTIONS: [&str; 3] = ["agent", "mode", "command"];

/// `product` merged over `harness`, once no key of it breaks the harness's model wiring: the
/// harness's `provider.<id>` entries, its `model` and `small_model`, the providers serving them
/// in `enabled_providers` / `disabled_providers`, and the model of an agent, mode or command
/// (which must be one of the serving providers').
pub(crate) fn layer(harness: &Value, product: &Value) -> Result<Value, ProvisionError> {
    let Some(settings) = product.as_object() else {
        return Err(ProvisionError::Config(format!(
            "AgentOptions::product_config must be a JSON object of OpenCode settings, not {}",
            kind(product)
        )));
    };
    check(harness, settings)?;
    let mut merged = harness.clone();
    merge_settings(&mut merged, product);
    Ok(merged)
}

/// Why `product` makes the agent a server of the scenario's own rather than a directory on a
/// shared server, if it does (`None`: it shares).
pub(crate) fn unshareable(product: &Value) -> Option<&'static str> {
    if product.get("plugin").is_some() {
        return Some(
            "`AgentOptions::product_config` loads plugins, which run inside the server process \
             and outlive the lease",
        );
    }
    if product.get("enabled_providers").is_some()
        && ModelsCatalog::for_config(product) == ModelsCatalog::Bundled
    {
        return Some(
            "`AgentOptions::product_config` enables providers of OpenCode's models catalog, \
             which a shared server does not read",
        );
    }
    if mentions_file(product) {
        return Some(
            "`AgentOptions::product_config` reads a `{file:...}`, which OpenCode resolves from \
             the workspace on a server of the scenario's own and from `.opencode/` on a shared \
             one",
        );
    }
    if !secrets(product).is_empty() {
        return Some(
            "`AgentOptions::product_config` holds credentials (provider options or headers, MCP \
             headers or environment), which stay out of the workspace's files",
        );
    }
    None
}

/// Where credentials live in an OpenCode config: `<section>.<id>.<key>`.
const SECRET_PLACES: [(&str, &[&str]); 2] = [
    // API keys, tokens and private base URLs.
    ("provider", &["options", "headers"]),
    // A remote server's headers and OAuth client, a local server's environment.
    ("mcp", &["headers", "environment", "oauth"]),
];

/// Every string under each provider's `options` and `headers` and each MCP server's `headers`,
/// `environment` and `oauth`. Strings shorter than 4 characters are left out: they cannot be
/// credentials and would blank out unrelated text.
pub(crate) fn secrets(config: &Value) -> Vec<String> {
    let mut found = Vec::new();
    for (section, keys) in SECRET_PLACES {
        let Some(entries) = config.get(section).and_then(Value::as_object) else {
            continue;
        };
        for entry in entries.values() {
            for key in keys {
                if let Some(value) = entry.get(*key) {
                    each_string(value, &mut |s| {
                        if s.len() >= 4 {
                            found.push(s.to_string());
                        }
                    });
                }
            }
        }
    }
    found
}

fn each_string(value: &Value, f: &mut impl FnMut(&str)) {
    match value {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|v| each_string(v, f)),
        Value::Object(map) => map.values().for_each(|v| each_string(v, f)),
        _ => {}
    }
}

/// What of the harness's config is its model wiring.
struct Wiring<'a> {
    harness: &'a Value,
    /// The providers `model` and `small_model` name: the ones serving the scenario's model.
    serving: Vec<&'a str>,
}

impl<'a> Wiring<'a> {
    fn of(harness: &'a Value) -> Self {
        let mut serving = Vec::new();
        for key in ["model", "small_model"] {
            if let Some(provider) = harness
                .get(key)
                .and_then(Value::as_str)
                .and_then(|model| model.split_once('/'))
                .map(|(provider, _)| provider)
            {
                if !serving.contains(&provider) {
                    serving.push(provider);
                }
            }
        }
        Wiring { harness, serving }
    }

    /// `provider/model`, as the harness names it, for messages.
    fn model(&self) -> String {
        match self.harness.get("model").and_then(Value::as_str) {
            Some(model) => format!("`{model}`"),
            None => "the scenario's model".to_string(),
        }
    }
}

fn check(harness: &Value, product: &Map<String, Value>) -> Result<(), ProvisionError> {
    let wiring = Wiring::of(harness);
    let refuse = |key: String, reason: String| Err(ProvisionError::ProductConfig { key, reason });
    if let (Some(ours), Some(theirs)) = (
        harness.get("provider").and_then(Value::as_object),
        product.get("provider").and_then(Value::as_object),
    ) {
        if let Some(id) = theirs.keys().find(|id| ours.contains_key(*id)) {
            return refuse(
                format!("provider.{id}"),
                format!(
                    "the harness serves the scenario's model {} from it (its package, base URL \
                     and models are the harness's); remove it (entries of other providers may \
                     stay)",
                    wiring.model()
                ),
            );
        }
    }
    for key in ["model", "small_model"] {
        let ours = harness.get(key);
        if let (Some(ours), Some(theirs)) = (ours, product.get(key)) {
            if ours != theirs {
                let ours = ours
                    .as_str()
                    .map_or_else(|| ours.to_string(), |s| format!("`{s}`"));
                return refuse(
                    key.to_string(),
                    format!(
                        "the harness points OpenCode at {ours}, the scenario's model; remove it \
                         (every agent already uses the scenario's model)"
                    ),
                );
            }
        }
    }
    if let Some(enabled) = product.get("enabled_providers").and_then(Value::as_array) {
        if let Some(missing) = wiring
            .serving
            .iter()
            .find(|id| !enabled.iter().any(|e| e.as_str() == Some(**id)))
        {
            return refuse(
                "enabled_providers".into(),
                format!(
                    "it leaves out `{missing}`, the provider of the scenario's model {}; list it \
                     too, or remove the key",
                    wiring.model()
                ),
            );
        }
    }
    if let Some(disabled) = product.get("disabled_providers").and_then(Value::as_array) {
        if let Some(id) = wiring
            .serving
            .iter()
            .find(|id| disabled.iter().any(|d| d.as_str() == Some(**id)))
        {
            return refuse(
                "disabled_providers".into(),
                format!(
                    "it disables `{id}`, the provider of the scenario's model {}; remove it \
                     from the list",
                    wiring.model()
                ),
            );
        }
    }
    if wiring.serving.is_empty() {
        return Ok(());
    }
    for section in MODEL_SECTIONS {
        let Some(entries) = product.get(section).and_then(Value::as_object) else {
            continue;
        };
        for (name, entry) in entries {
            let Some(model) = entry.get("model").and_then(Value::as_str) else {
                continue;
            };
            let provider = model.split_once('/').map_or(model, |(p, _)| p);
            if !wiring.serving.contains(&provider) {
                return refuse(
                    format!("{section}.{name}.model"),
                    format!(
                        "`{model}` is not served in a live test: only the scenario's model {} \
                         is; remove the key (the {section} then uses the scenario's model)",
                        wiring.model()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// Merges `layer` into `base` as OpenCode merges one config source over another.
pub(crate) fn merge_settings(base: &mut Value, layer: &Value) {
    let (Some(base), Some(layer)) = (base.as_object_mut(), layer.as_object()) else {
        *base = layer.clone();
        return;
    };
    for (key, value) in layer {
        match base.get_mut(key) {
            Some(Value::Array(ours)) if JOINED_LISTS.contains(&key.as_str()) => {
                if let Some(theirs) = value.as_array() {
                    for item in theirs {
                        if !ours.contains(item) {
                            ours.push(item.clone());
                        }
                    }
                } else {
                    base.insert(key.clone(), value.clone());
                }
            }
            Some(ours) => deep_merge(ours, value),
            None => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Objects key by key at every depth; anything else replaced.
fn deep_merge(base: &mut Value, layer: &Value) {
    match (base.as_object_mut(), layer.as_object()) {
        (Some(ours), Some(theirs)) => {
            for (key, value) in theirs {
                match ours.get_mut(key) {
                    Some(existing) => deep_merge(existing, value),
                    None => {
                        ours.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        _ => *base = layer.clone(),
    }
}

/// Whether a string of `value` substitutes a file's content (`{file:path}`).
fn mentions_file(value: &Value) -> bool {
    let mut found = false;
    each_string(value, &mut |s| found |= s.contains("{file:"));
    found
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The shape of the scripted model's config (`model::slot::config`).
    fn scripted() -> Value {
        json!({
            "autoupdate": false,
            "share": "disabled",
            "enabled_providers": ["scripted"],
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": "http://127.0.0.1:1/v1"},
                "models": {"scripted-model": {"tool_call": true}},
            }},
            "model": "scripted/scripted-model",
            "small_model": "scripted/scripted-model",
            "permission": {"*": "allow", "external_directory": "deny"},
            "instructions": ["HARNESS.md"],
        })
    }

    fn refused(product: Value) -> (String, String) {
        match layer(&scripted(), &product) {
            Err(ProvisionError::ProductConfig { key, reason }) => (key, reason),
            other => panic!("{product} was not refused: {other:?}"),
        }
    }

    #[test]
    fn product_settings_merge_over_the_harness_config_as_opencode_merges_sources() {
        let product = json!({
            "permission": {"bash": "ask"},
            "agent": {"reviewer": {"prompt": "Review.", "model": "scripted/scripted-model"}},
            "instructions": ["RULES.md", "HARNESS.md"],
            "provider": {"anthropic": {"options": {"timeout": 5}}},
            "enabled_providers": ["scripted"],
            "model": "scripted/scripted-model",
            "snapshot": true,
            "share": "manual",
        });
        let merged = layer(&scripted(), &product).unwrap();
        // Objects merge key by key: the harness's rules stay, the product's are added.
        assert_eq!(
            merged["permission"],
            json!({"*": "allow", "bash": "ask", "external_directory": "deny"})
        );
        assert_eq!(merged["agent"]["reviewer"]["prompt"], "Review.");
        // Lists OpenCode joins are joined once; others are replaced.
        assert_eq!(merged["instructions"], json!(["HARNESS.md", "RULES.md"]));
        assert_eq!(merged["enabled_providers"], json!(["scripted"]));
        // The wiring is untouched; other providers' entries and other settings pass.
        assert_eq!(
            merged["provider"]["scripted"],
            scripted()["provider"]["scripted"]
        );
        assert_eq!(merged["provider"]["anthropic"]["options"]["timeout"], 5);
        assert_eq!(merged["model"], "scripted/scripted-model");
        assert_eq!(merged["snapshot"], true);
        assert_eq!(merged["share"], "manual");
        // An empty layer changes nothing.
        assert_eq!(layer(&scripted(), &json!({})).unwrap(), scripted());
    }

    #[test]
    fn a_setting_that_breaks_the_wiring_is_refused_naming_its_key() {
        for (product, key, says) in [
            (
                json!({"provider": {"scripted": {"options": {"baseURL": "http://x/v1"}}}}),
                "provider.scripted",
                "serves the scenario's model `scripted/scripted-model`",
            ),
            (
                json!({"model": "anthropic/claude"}),
                "model",
                "points OpenCode at `scripted/scripted-model`",
            ),
            (
                json!({"small_model": "openai/gpt"}),
                "small_model",
                "remove it",
            ),
            (
                json!({"enabled_providers": ["anthropic"]}),
                "enabled_providers",
                "leaves out `scripted`",
            ),
            (
                json!({"disabled_providers": ["openai", "scripted"]}),
                "disabled_providers",
                "disables `scripted`",
            ),
            (
                json!({"agent": {"build": {"model": "anthropic/claude"}}}),
                "agent.build.model",
                "`anthropic/claude` is not served",
            ),
            (
                json!({"mode": {"fast": {"model": "openai/gpt"}}}),
                "mode.fast.model",
                "the mode then uses",
            ),
            (
                json!({"command": {"fix": {"template": "x", "model": "openai/gpt"}}}),
                "command.fix.model",
                "the command then uses",
            ),
        ] {
            let (named, reason) = refused(product.clone());
            assert_eq!(named, key, "{product}");
            assert!(reason.contains(says), "{product}: {reason}");
            let message = ProvisionError::ProductConfig { key: named, reason }.to_string();
            assert!(
                message.starts_with(&format!("the product config cannot set `{key}`: ")),
                "{message}"
            );
        }
        // Harmless spellings of the same keys pass.
        for harmless in [
            json!({"disabled_providers": ["openai"]}),
            json!({"enabled_providers": ["anthropic", "scripted"]}),
            json!({"agent": {"plan": {"prompt": "Plan."}}}),
            json!({"small_model": "scripted/scripted-model"}),
        ] {
            layer(&scripted(), &harmless).unwrap();
        }
    }

    #[test]
    fn a_product_config_that_is_not_an_object_says_so() {
        let error = layer(&scripted(), &json!(["agent"])).unwrap_err();
        assert!(matches!(error, ProvisionError::Config(_)));
        assert_eq!(
            error.to_string(),
            "invalid agent configuration: AgentOptions::product_config must be a JSON object of \
             OpenCode settings, not an array"
        );
    }

    /// A real-model config (the user's, a cassette's) is wired by whatever it names.
    #[test]
    fn the_wiring_is_whatever_the_harness_config_names() {
        let replay = json!({
            "enabled_providers": ["cassette"],
            "provider": {"cassette": {"models": {"big": {}}}},
            "model": "cassette/big",
            "small_model": "cassette/small",
        });
        let error = layer(&replay, &json!({"enabled_providers": ["scripted"]})).unwrap_err();
        assert!(
            error.to_string().contains("leaves out `cassette`"),
            "{error}"
        );
        layer(
            &replay,
            &json!({"agent": {"x": {"model": "cassette/small"}}}),
        )
        .unwrap();
        // Without a model of its own, nothing names the serving provider: only the entries are
        // the harness's.
        let unnamed = json!({"provider": {"ollama": {"models": {}}}});
        layer(&unnamed, &json!({"agent": {"x": {"model": "other/m"}}})).unwrap();
        assert!(layer(&unnamed, &json!({"provider": {"ollama": {}}})).is_err());
    }

    #[test]
    fn a_product_config_shares_unless_it_reaches_beyond_a_directory() {
        assert_eq!(unshareable(&json!({"permission": {"bash": "ask"}})), None);
        assert_eq!(
            unshareable(
                &json!({"enabled_providers": ["scripted"], "mcp": {"t": {"command": ["x"]}}})
            ),
            None
        );
        for beyond in [
            json!({"plugin": ["my-plugin"]}),
            json!({"enabled_providers": ["scripted", "anthropic"]}),
            json!({"provider": {"anthropic": {"options": {"apiKey": "sk-12345678"}}}}),
            json!({"mcp": {"t": {"type": "remote", "headers": {"Authorization": "Bearer abcdef"}}}}),
            json!({"agent": {"x": {"prompt": "{file:./prompts/x.md}"}}}),
        ] {
            assert!(unshareable(&beyond).is_some(), "{beyond}");
        }
    }
}
