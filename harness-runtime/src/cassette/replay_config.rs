//! The OpenCode config of a replay: one provider, `cassette`, at the embedded server, with the
//! recorded provider package and model, so OpenCode sends what it sent while recording.

use serde_json::{Map, Value, json};

use super::format::Cassette;

/// The provider id a replay's config uses.
pub(crate) const PROVIDER_ID: &str = "cassette";
/// The key a replay's provider sends (any will do).
const REPLAY_API_KEY: &str = "cassette-replay";

/// The config for `cassette` served at `base_url` (`http://127.0.0.1:<port>/v1`, or `/api`
/// for Ollama's API), with the scenario's `permission`.
pub(crate) fn opencode_config(cassette: &Cassette, base_url: &str, permission: Value) -> Value {
    let recorded = &cassette.recorded;
    let mut models = Map::new();
    models.insert(recorded.model.clone(), recorded.model_entry.clone());
    for interaction in &cassette.interactions {
        models
            .entry(interaction.request.model.clone())
            .or_insert_with(|| recorded.model_entry.clone());
    }
    // A title request offers no tools; when it named another model, that was the small model.
    let small = cassette
        .interactions
        .iter()
        .map(|i| &i.request)
        .find(|r| r.tools.is_empty() && r.model != recorded.model)
        .map_or(recorded.model.as_str(), |r| r.model.as_str());
    json!({
        "autoupdate": false,
        "share": "disabled",
        "enabled_providers": [PROVIDER_ID],
        "provider": {PROVIDER_ID: {
            "npm": recorded.npm,
            "name": "Cassette",
            // A placeholder key: the Anthropic, OpenAI and Google packages send nothing without
            // one; the replay ignores it.
            "options": {"baseURL": base_url, "apiKey": REPLAY_API_KEY},
            "models": models,
        }},
        "model": format!("{PROVIDER_ID}/{}", recorded.model),
        "small_model": format!("{PROVIDER_ID}/{small}"),
        "permission": permission,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::{
        FORMAT, Interaction, NormalizedRequest, Recorded, RecordedResponse, WireApi,
    };

    fn interaction(model: &str, tools: &[&str]) -> Interaction {
        Interaction {
            request: NormalizedRequest {
                api: WireApi::OpenAi,
                model: model.into(),
                stream: true,
                tools: tools.iter().map(|t| t.to_string()).collect(),
                tool_choice: None,
                response_format: None,
                roles: vec![],
                last_user_text: None,
                tool_results: vec![],
            },
            response: RecordedResponse::Dropped { detail: "x".into() },
        }
    }

    #[test]
    fn the_recorded_model_is_served_and_the_title_model_is_the_small_one() {
        let cassette = Cassette {
            format: FORMAT,
            scenario: "t::x".into(),
            recorded: Recorded {
                api: WireApi::OpenAi,
                npm: "@ai-sdk/openai-compatible".into(),
                model: "big".into(),
                model_entry: json!({"tool_call": true}),
            },
            provenance: None,
            interactions: vec![interaction("big", &["bash"]), interaction("small", &[])],
        };
        let config = opencode_config(&cassette, "http://127.0.0.1:1/v1", json!({"bash": "ask"}));
        assert_eq!(config["model"], "cassette/big");
        assert_eq!(config["small_model"], "cassette/small");
        assert_eq!(config["enabled_providers"], json!(["cassette"]));
        // Enabling nothing else, it cannot see OpenCode's models catalog: it is spared it.
        assert_eq!(
            crate::opencode::ModelsCatalog::for_config(&config),
            crate::opencode::ModelsCatalog::Empty
        );
        let provider = &config["provider"]["cassette"];
        assert_eq!(provider["npm"], "@ai-sdk/openai-compatible");
        assert_eq!(provider["options"]["baseURL"], "http://127.0.0.1:1/v1");
        assert_eq!(provider["models"]["small"], json!({"tool_call": true}));
        assert_eq!(config["permission"], json!({"bash": "ask"}));
        let mut only_big = cassette;
        only_big.interactions.pop();
        let config = opencode_config(&only_big, "http://127.0.0.1:1/v1", json!({}));
        assert_eq!(config["small_model"], "cassette/big");
    }
}
