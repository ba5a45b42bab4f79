//! OpenCode's built-in providers, as its pinned binary knows them, and how the relay talks to
//! each one's API.
//!
//! `catalog.json` is the models.dev catalog bundled in the pinned `opencode-ai`, reduced to what
//! the harness reads (`node scripts/models-catalog.mjs` makes it again after an upgrade). It is
//! data of the crate, not read from OpenCode at run time: the model check runs before any
//! OpenCode starts, and a test must not depend on a file outside the repository.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use super::format::WireApi;

/// The catalog as committed.
const CATALOG: &str = include_str!("catalog.json");

/// The reduced catalog.
#[derive(Debug, Deserialize)]
pub(crate) struct Catalog {
    /// The `opencode-ai` version it comes from.
    pub(crate) opencode: String,
    /// Every built-in provider, by id.
    providers: Vec<CatalogProvider>,
}

/// One built-in provider.
#[derive(Debug, Deserialize)]
pub(crate) struct CatalogProvider {
    /// `anthropic`, `openai`, `google`, `openrouter`.
    pub(crate) id: String,
    /// The AI SDK package OpenCode drives it with.
    pub(crate) npm: String,
    /// The variables OpenCode takes its key from, the first one set winning.
    pub(crate) env: Vec<String>,
    /// Its API's address when the package has no default one.
    #[serde(default)]
    pub(crate) api: Option<String>,
    /// Its models' ids.
    pub(crate) models: Vec<String>,
    /// Models served through another package or address than the provider's.
    #[serde(default)]
    pub(crate) model_provider: BTreeMap<String, ModelProvider>,
}

/// A model's own package, address or API shape.
#[derive(Clone, Debug, Default, Deserialize)]
pub(crate) struct ModelProvider {
    #[serde(default)]
    pub(crate) npm: Option<String>,
    #[serde(default)]
    pub(crate) api: Option<String>,
    /// `completions` or `responses`, for `@ai-sdk/openai` and gateways speaking both.
    #[serde(default)]
    pub(crate) shape: Option<String>,
}

/// The committed catalog.
pub(crate) fn catalog() -> &'static Catalog {
    static PARSED: OnceLock<Catalog> = OnceLock::new();
    // A compile-time constant checked by `the_catalog_parses_and_knows_the_hosted_providers`.
    PARSED.get_or_init(|| serde_json::from_str(CATALOG).expect("catalog.json is valid"))
}

impl Catalog {
    /// The built-in provider `id`.
    pub(crate) fn provider(&self, id: &str) -> Option<&CatalogProvider> {
        self.providers.iter().find(|provider| provider.id == id)
    }

    /// Every built-in provider's id, sorted.
    pub(crate) fn ids(&self) -> impl Iterator<Item = &str> {
        self.providers.iter().map(|provider| provider.id.as_str())
    }
}

impl CatalogProvider {
    /// Whether `model` is one of its models.
    pub(crate) fn has_model(&self, model: &str) -> bool {
        self.models.iter().any(|m| m == model)
    }

    /// `model`'s own overrides, if any.
    pub(crate) fn model_override(&self, model: &str) -> ModelProvider {
        self.model_provider.get(model).cloned().unwrap_or_default()
    }
}

/// How the relay sends the key upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyHeader {
    /// `Authorization: Bearer <key>` (OpenAI, OpenRouter, every chat-completions gateway).
    Bearer,
    /// `x-api-key: <key>` with `anthropic-version: 2023-06-01` (Anthropic's Messages API).
    Anthropic,
    /// `x-goog-api-key: <key>` (Google's Generative Language API).
    Google,
}

impl KeyHeader {
    /// The header an API takes its key in.
    pub(crate) fn of(api: WireApi) -> Self {
        match api {
            WireApi::Anthropic => Self::Anthropic,
            WireApi::Gemini => Self::Google,
            WireApi::OpenAi | WireApi::Responses | WireApi::Ollama => Self::Bearer,
        }
    }
}

/// The Anthropic API version every Messages request names (the one OpenCode's package sends).
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// What the relay knows of a provider package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Package {
    /// A package the relay speaks the API of, with its default address (if it has one).
    Relayed {
        api: WireApi,
        default_base: Option<&'static str>,
    },
    /// A package whose requests are signed per request: the relay cannot add that upstream.
    Signed {
        /// How it signs.
        how: &'static str,
    },
    /// A package the relay does not know the API of.
    Unknown,
}

/// The packages the relay speaks, for messages.
pub(crate) const RELAYED_PACKAGES: &str = "@ai-sdk/anthropic, @ai-sdk/openai, @ai-sdk/google, \
     @openrouter/ai-sdk-provider, @ai-sdk/openai-compatible, an ollama provider";

/// What the relay knows of `npm`, whose model asked for API `shape` (`completions`/`responses`).
pub(crate) fn package(npm: &str, shape: Option<&str>) -> Package {
    let relayed = |api, default_base| Package::Relayed { api, default_base };
    match npm {
        "@ai-sdk/anthropic" => relayed(WireApi::Anthropic, Some("https://api.anthropic.com/v1")),
        // OpenCode drives OpenAI's own models through the Responses API.
        "@ai-sdk/openai" if shape != Some("completions") => {
            relayed(WireApi::Responses, Some("https://api.openai.com/v1"))
        }
        "@ai-sdk/openai" => relayed(WireApi::OpenAi, Some("https://api.openai.com/v1")),
        "@ai-sdk/google" => relayed(
            WireApi::Gemini,
            Some("https://generativelanguage.googleapis.com/v1beta"),
        ),
        "@openrouter/ai-sdk-provider" => {
            relayed(WireApi::OpenAi, Some("https://openrouter.ai/api/v1"))
        }
        "@ai-sdk/openai-compatible" => relayed(WireApi::OpenAi, None),
        "@ai-sdk/amazon-bedrock" => Package::Signed {
            how: "each request is signed with AWS SigV4 from the AWS credentials",
        },
        "@ai-sdk/google-vertex" | "@ai-sdk/google-vertex/anthropic" => Package::Signed {
            how: "each request carries an OAuth token minted from Google Cloud credentials",
        },
        "@ai-sdk/azure" => Package::Signed {
            how: "its address is per Azure resource and its credentials may be Azure AD tokens",
        },
        npm if npm.contains("ollama") => {
            relayed(WireApi::Ollama, Some("http://127.0.0.1:11434/api"))
        }
        _ => Package::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_parses_and_knows_the_hosted_providers() {
        let catalog = catalog();
        assert_eq!(catalog.opencode, "1.18.33");
        for (id, npm, env) in [
            ("anthropic", "@ai-sdk/anthropic", "ANTHROPIC_API_KEY"),
            ("openai", "@ai-sdk/openai", "OPENAI_API_KEY"),
            ("google", "@ai-sdk/google", "GOOGLE_GENERATIVE_AI_API_KEY"),
            (
                "openrouter",
                "@openrouter/ai-sdk-provider",
                "OPENROUTER_API_KEY",
            ),
        ] {
            let provider = catalog.provider(id).unwrap();
            assert_eq!(provider.npm, npm);
            assert!(provider.env.iter().any(|e| e == env), "{id}");
            assert!(!provider.models.is_empty(), "{id}");
        }
        assert!(
            catalog
                .provider("anthropic")
                .unwrap()
                .has_model("claude-sonnet-4-5")
        );
        assert!(
            catalog
                .provider("google")
                .unwrap()
                .has_model("gemini-2.5-flash")
        );
        assert!(catalog.provider("no-such-provider").is_none());
        let ids: Vec<&str> = catalog.ids().collect();
        assert!(
            ids.len() > 100 && ids.contains(&"openrouter"),
            "{}",
            ids.len()
        );
    }

    #[test]
    fn each_package_has_its_api_address_and_key_header() {
        let api_of = |npm, shape| match package(npm, shape) {
            Package::Relayed { api, default_base } => (api, default_base, KeyHeader::of(api)),
            other => panic!("{npm}: {other:?}"),
        };
        assert_eq!(
            api_of("@ai-sdk/anthropic", None),
            (
                WireApi::Anthropic,
                Some("https://api.anthropic.com/v1"),
                KeyHeader::Anthropic
            )
        );
        assert_eq!(api_of("@ai-sdk/openai", None).0, WireApi::Responses);
        assert_eq!(
            api_of("@ai-sdk/openai", Some("completions")).0,
            WireApi::OpenAi
        );
        assert_eq!(
            api_of("@ai-sdk/google", None),
            (
                WireApi::Gemini,
                Some("https://generativelanguage.googleapis.com/v1beta"),
                KeyHeader::Google
            )
        );
        assert_eq!(
            api_of("@openrouter/ai-sdk-provider", None),
            (
                WireApi::OpenAi,
                Some("https://openrouter.ai/api/v1"),
                KeyHeader::Bearer
            )
        );
        assert_eq!(api_of("@ai-sdk/openai-compatible", None).1, None);
        assert_eq!(api_of("ollama-ai-provider-v2", None).0, WireApi::Ollama);
        for signed in [
            "@ai-sdk/amazon-bedrock",
            "@ai-sdk/google-vertex",
            "@ai-sdk/google-vertex/anthropic",
            "@ai-sdk/azure",
        ] {
            assert!(
                matches!(package(signed, None), Package::Signed { .. }),
                "{signed}"
            );
        }
        assert_eq!(package("@ai-sdk/groq", None), Package::Unknown);
    }
}
