//! Which models catalog an agent's OpenCode reads: its own, or an empty one.
//!
//! OpenCode 1.18.33 ships models.dev's catalog (every provider it knows, with their models) and
//! builds each instance's provider list from it: about 0.8 s of CPU for every workspace a server
//! opens, most of what a scenario on a shared server costs beyond its turns. A config whose
//! `enabled_providers` names only the harness's own providers (the scripted model's, a
//! cassette's) cannot see the catalog: OpenCode drops every provider not enabled, and the
//! harness's ids are not in the catalog. Such an agent reads an empty catalog
//! (`OPENCODE_MODELS_PATH`); everything its API shows is the same (`/provider`,
//! `/config/providers`, `/config`, `/agent`, checked against real OpenCode by
//! `harness-runtime/tests/real_opencode/models_catalog.rs`). Any other config (the user's, or one a scenario
//! passes) keeps OpenCode's own catalog.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The variable OpenCode reads its catalog from, instead of its cache or the bundled one.
const PATH_ENV: &str = "OPENCODE_MODELS_PATH";
/// The empty catalog's file, in an agent's root.
const EMPTY_FILE: &str = "models-catalog.json";
/// An empty catalog: no provider.
const EMPTY: &str = "{}";

/// Where the empty catalog of the agent rooted at `root` is.
fn empty_file(root: &Path) -> PathBuf {
    root.join(EMPTY_FILE)
}

/// Writes the empty catalog into the agent's `root` (part of its layout).
pub(crate) fn write_empty(root: &Path) -> std::io::Result<()> {
    std::fs::write(empty_file(root), EMPTY)
}

/// The providers the harness defines in the configs it makes, none of them in the catalog.
const HARNESS_PROVIDERS: [&str; 2] = [
    crate::model::PROVIDER_ID,
    crate::cassette::REPLAY_PROVIDER_ID,
];

/// The catalog an agent's OpenCode reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModelsCatalog {
    /// OpenCode's own: its config may show any provider of it.
    Bundled,
    /// An empty one: its config cannot see the catalog.
    Empty,
}

impl ModelsCatalog {
    /// The catalog for an agent whose config is `config`.
    pub(crate) fn for_config(config: &Value) -> Self {
        let enabled = config.get("enabled_providers").and_then(Value::as_array);
        match enabled {
            Some(ids)
                if !ids.is_empty()
                    && ids.iter().all(|id| {
                        id.as_str()
                            .is_some_and(|id| HARNESS_PROVIDERS.contains(&id))
                    }) =>
            {
                Self::Empty
            }
            _ => Self::Bundled,
        }
    }

    /// The environment that selects it for an agent rooted at `root` (whose layout holds the
    /// empty catalog's file).
    pub(crate) fn env(self, root: &Path) -> Option<(String, String)> {
        match self {
            Self::Bundled => None,
            Self::Empty => Some((PATH_ENV.to_string(), empty_file(root).display().to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_configs_enabling_nothing_but_the_harness_providers_get_the_empty_catalog() {
        let scripted = json!({"enabled_providers": ["scripted"], "model": "scripted/m"});
        assert_eq!(ModelsCatalog::for_config(&scripted), ModelsCatalog::Empty);
        let cassette = json!({"enabled_providers": ["cassette"]});
        assert_eq!(ModelsCatalog::for_config(&cassette), ModelsCatalog::Empty);
        for config in [
            json!({}),
            json!({"model": "scripted/m"}),
            json!({"enabled_providers": []}),
            json!({"enabled_providers": ["scripted", "anthropic"]}),
            json!({"enabled_providers": ["ollama"]}),
            json!({"enabled_providers": "scripted"}),
        ] {
            assert_eq!(
                ModelsCatalog::for_config(&config),
                ModelsCatalog::Bundled,
                "{config}"
            );
        }
    }

    #[test]
    fn the_empty_catalog_is_a_file_in_the_root() {
        let root = Path::new("/r");
        assert_eq!(ModelsCatalog::Bundled.env(root), None);
        assert_eq!(
            ModelsCatalog::Empty.env(root),
            Some((PATH_ENV.into(), "/r/models-catalog.json".into()))
        );
    }
}
