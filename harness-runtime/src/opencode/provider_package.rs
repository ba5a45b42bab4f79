//! Provider packages OpenCode does not bundle (an Ollama one, `ollama-ai-provider-v2`), made
//! installed for it without a network.
//!
//! OpenCode imports a bundled package (`@ai-sdk/anthropic`, `@ai-sdk/openai-compatible`, …) from
//! its binary. For any other `npm` of a provider it calls its `Npm.add(spec)`, which installs
//! the package with npm's arborist from the registry into `$XDG_CACHE_HOME/opencode/packages/
//! <spec>/`, unless `<that dir>/node_modules/<name>` already exists: then it imports that as it
//! is (1.18.33's `Npm.add`: `if (existsSafe(join(dir, "node_modules", name))) return
//! resolve(name, …)`). A scenario's server is offline and its cache is new each time, so the
//! harness installs the package there before the server starts: a copy of the same package
//! installed beside the pinned OpenCode (`npm ci` of the checkout's `package.json`) with every
//! package it resolves, laid out as in the checkout's `node_modules`. A copy, not a symlink:
//! Bun's resolver lists each directory above the file it imports (the real one, symlinks
//! resolved), so a symlink would need the sandbox to let the server read the checkout and its
//! whole `node_modules`; the copy lies in the server's root, which it may read and write, and
//! writing it does not reach the checkout.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The provider packages OpenCode 1.18.33 imports from its own binary (its `BUNDLED_PROVIDERS`),
/// never installed: no need to seed them.
const BUNDLED: &[&str] = &[
    "@ai-sdk/amazon-bedrock",
    "@ai-sdk/amazon-bedrock/mantle",
    "@ai-sdk/anthropic",
    "@ai-sdk/azure",
    "@ai-sdk/google",
    "@ai-sdk/google-vertex",
    "@ai-sdk/google-vertex/anthropic",
    "@ai-sdk/openai",
    "@ai-sdk/openai-compatible",
    "@openrouter/ai-sdk-provider",
    "@ai-sdk/xai",
    "@ai-sdk/mistral",
    "@ai-sdk/groq",
    "@ai-sdk/deepinfra",
    "@ai-sdk/cerebras",
    "@ai-sdk/cohere",
    "@ai-sdk/gateway",
    "@ai-sdk/togetherai",
    "@ai-sdk/perplexity",
    "@ai-sdk/vercel",
    "@ai-sdk/alibaba",
    "gitlab-ai-provider",
    "@ai-sdk/github-copilot",
    "venice-ai-sdk-provider",
];

/// Why an agent whose config names such a package gets a server of its own (progress).
pub(crate) const OWN_CACHE: &str =
    "its provider package is not bundled in OpenCode: its server's own cache holds it";

/// A provider package of the config that OpenCode would install, installed beside OpenCode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProviderPackage {
    /// The config's `npm`, as OpenCode names the cache folder after it.
    spec: String,
    /// The package's name (`spec` without a version).
    name: String,
    /// Its installed directory beside OpenCode, symlinks resolved.
    installed: PathBuf,
    /// The `node_modules` it is installed in, which holds every package it resolves.
    node_modules: PathBuf,
}

/// The packages of `config`'s providers that OpenCode would install and that are installed in
/// `node_modules` (the one holding OpenCode's own package), each once. A package not installed
/// there, or installed at another version than the `npm` names, is left to OpenCode.
pub(crate) fn to_seed(config: &Value, node_modules: Option<&Path>) -> Vec<ProviderPackage> {
    let Some(node_modules) = node_modules else {
        return Vec::new();
    };
    let Some(providers) = config.get("provider").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut packages: Vec<ProviderPackage> = Vec::new();
    for provider in providers.values() {
        let Some(spec) = provider.get("npm").and_then(Value::as_str) else {
            continue;
        };
        if BUNDLED.contains(&spec) || packages.iter().any(|p| p.spec == spec) {
            continue;
        }
        let Some((name, version)) = parse_spec(spec) else {
            continue;
        };
        let Ok(installed) = node_modules.join(name).canonicalize() else {
            continue;
        };
        let Some(manifest) = manifest(&installed) else {
            continue;
        };
        if version.is_some_and(|v| manifest["version"].as_str() != Some(v)) {
            continue;
        }
        let package = ProviderPackage {
            spec: spec.to_string(),
            name: name.to_string(),
            installed,
            node_modules: node_modules.to_path_buf(),
        };
        // Resolved elsewhere (a linked package, a `node_modules` above the checkout's): left to
        // OpenCode, since its copy would not resolve the same.
        if package.tree().iter().all(|p| p.starts_with(node_modules)) {
            packages.push(package);
        }
    }
    packages
}

/// `name` or `name@version` (`@scope/name`, `@scope/name@version`): the name and the version;
/// `None` for any other spelling (a path, a URL, a git or `file:` spec, a tag range).
fn parse_spec(spec: &str) -> Option<(&str, Option<&str>)> {
    let scope_end = if spec.starts_with('@') {
        spec.find('/')? + 1
    } else {
        0
    };
    let (name, version) = match spec[scope_end..].find('@') {
        Some(at) => (&spec[..scope_end + at], Some(&spec[scope_end + at + 1..])),
        None => (spec, None),
    };
    let plain = |part: &str| {
        !part.is_empty()
            && !part.starts_with('.')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~'))
    };
    let parts_ok = match name.strip_prefix('@') {
        Some(scoped) => {
            let (scope, rest) = scoped.split_once('/')?;
            plain(scope) && plain(rest)
        }
        None => plain(name),
    };
    let version_ok = version.is_none_or(|v| {
        !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
    });
    (parts_ok && version_ok).then_some((name, version))
}

/// The `package.json` of the package at `dir`.
fn manifest(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

impl ProviderPackage {
    /// The spec the config names.
    pub(crate) fn spec(&self) -> &str {
        &self.spec
    }

    /// Installs the package in the OpenCode cache under `xdg_cache`, where `Npm.add` looks for
    /// it: `opencode/packages/<spec>/node_modules/<name>`, and beside it every package it
    /// resolves, each at its place in the checkout's `node_modules`.
    pub(crate) fn seed(&self, xdg_cache: &Path) -> std::io::Result<()> {
        let target = xdg_cache
            .join("opencode")
            .join("packages")
            .join(&self.spec)
            .join("node_modules");
        for path in self.tree() {
            let relative = path
                .strip_prefix(&self.node_modules)
                .map_err(|_| std::io::Error::other(format!("{} is elsewhere", path.display())))?;
            copy_tree(&path, &target.join(relative))?;
        }
        Ok(())
    }

    /// The package and every package it depends on (dependencies, optional and peer ones),
    /// resolved as Node resolves them from each one's place, each not already beneath another.
    fn tree(&self) -> Vec<PathBuf> {
        let mut found = vec![self.installed.clone()];
        let mut queue = vec![self.installed.clone()];
        while let Some(dir) = queue.pop() {
            let Some(manifest) = manifest(&dir) else {
                continue;
            };
            let names = ["dependencies", "optionalDependencies", "peerDependencies"]
                .iter()
                .filter_map(|field| manifest[field].as_object())
                .flat_map(|deps| deps.keys());
            for name in names {
                let Some(dependency) = resolve(&dir, name) else {
                    continue;
                };
                if !found.contains(&dependency) {
                    found.push(dependency.clone());
                    queue.push(dependency);
                }
            }
        }
        let mut tree: Vec<PathBuf> = Vec::new();
        for path in &found {
            if !found
                .iter()
                .any(|other| other != path && path.starts_with(other))
            {
                tree.push(path.clone());
            }
        }
        tree
    }
}

/// Copies the directory `from` to `to` (made with its parents): files copied, symlinks made
/// again as they are.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

/// The package `name` as Node resolves it from the package at `dir`: the nearest
/// `node_modules/<name>` of `dir` or an ancestor, symlinks resolved.
fn resolve(dir: &Path, name: &str) -> Option<PathBuf> {
    dir.ancestors()
        .map(|ancestor| ancestor.join("node_modules").join(name))
        .find(|candidate| candidate.join("package.json").is_file())
        .and_then(|found| found.canonicalize().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write_package(dir: &Path, manifest: Value) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("package.json"), manifest.to_string()).unwrap();
    }

    #[test]
    fn specs_are_names_with_an_optional_exact_version() {
        assert_eq!(
            parse_spec("ollama-ai-provider-v2"),
            Some(("ollama-ai-provider-v2", None))
        );
        assert_eq!(
            parse_spec("ollama-ai-provider-v2@3.6.0"),
            Some(("ollama-ai-provider-v2", Some("3.6.0")))
        );
        assert_eq!(parse_spec("@scope/pkg"), Some(("@scope/pkg", None)));
        assert_eq!(
            parse_spec("@scope/pkg@1.2.3"),
            Some(("@scope/pkg", Some("1.2.3")))
        );
        for other in [
            "file:///x/y.js",
            "../pkg",
            "/abs/pkg",
            "git+https://x/y",
            "pkg@^1.0.0",
            "@scope",
            "",
            "..",
        ] {
            assert_eq!(parse_spec(other), None, "{other}");
        }
    }

    /// A checkout's `node_modules`: the provider package with a nested dependency and a hoisted
    /// one, an unrelated package beside them, and a bundled package installed too.
    fn checkout() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let modules = tmp.path().canonicalize().unwrap().join("node_modules");
        write_package(
            &modules.join("ollama-ai-provider-v2"),
            json!({"version": "3.6.0", "dependencies": {"@ai-sdk/provider": "^3"},
                   "peerDependencies": {"zod": "^4"}}),
        );
        write_package(
            &modules.join("ollama-ai-provider-v2/node_modules/@ai-sdk/provider"),
            json!({"version": "3.0.19", "dependencies": {"json-schema": "^0.4"}}),
        );
        write_package(&modules.join("json-schema"), json!({"version": "0.4.0"}));
        write_package(&modules.join("zod"), json!({"version": "4.1.0"}));
        write_package(&modules.join("secret-package"), json!({"version": "1.0.0"}));
        write_package(
            &modules.join("@ai-sdk/openai-compatible"),
            json!({"version": "2.0.41"}),
        );
        (tmp, modules)
    }

    fn config(npms: &[&str]) -> Value {
        let providers: serde_json::Map<String, Value> = npms
            .iter()
            .enumerate()
            .map(|(i, npm)| (format!("p{i}"), json!({"npm": npm})))
            .collect();
        json!({"provider": providers})
    }

    #[test]
    fn only_unbundled_packages_installed_beside_opencode_at_the_named_version_are_seeded() {
        let (_tmp, modules) = checkout();
        let seeded = |npms: &[&str]| -> Vec<String> {
            to_seed(&config(npms), Some(&modules))
                .iter()
                .map(|p| p.spec().to_string())
                .collect()
        };
        assert_eq!(
            seeded(&["ollama-ai-provider-v2", "ollama-ai-provider-v2"]),
            ["ollama-ai-provider-v2"]
        );
        assert_eq!(
            seeded(&["ollama-ai-provider-v2@3.6.0"]),
            ["ollama-ai-provider-v2@3.6.0"]
        );
        assert!(seeded(&["ollama-ai-provider-v2@3.5.0"]).is_empty());
        assert!(seeded(&["@ai-sdk/openai-compatible", "not-installed"]).is_empty());
        assert!(seeded(&["file:///elsewhere/index.mjs"]).is_empty());
        assert!(to_seed(&config(&["ollama-ai-provider-v2"]), None).is_empty());
        assert!(to_seed(&json!({}), Some(&modules)).is_empty());
    }

    #[test]
    fn the_seed_is_a_copy_where_opencode_looks_with_what_it_resolves_and_nothing_else() {
        let (tmp, modules) = checkout();
        let [package] = &to_seed(&config(&["ollama-ai-provider-v2"]), Some(&modules))[..] else {
            panic!("one package");
        };
        let cache = tmp.path().join("cache");
        package.seed(&cache).unwrap();
        let seeded = cache.join("opencode/packages/ollama-ai-provider-v2/node_modules");
        let mut names: Vec<String> = walkdir(&seeded)
            .iter()
            .map(|p| p.strip_prefix(&seeded).unwrap().display().to_string())
            .collect();
        names.sort();
        // Its nested dependency beneath it, the hoisted ones beside it; a copy, not a link.
        assert_eq!(
            names,
            [
                "json-schema/package.json",
                "ollama-ai-provider-v2/node_modules/@ai-sdk/provider/package.json",
                "ollama-ai-provider-v2/package.json",
                "zod/package.json",
            ]
        );
        let link = seeded.join("ollama-ai-provider-v2");
        assert!(!link.symlink_metadata().unwrap().file_type().is_symlink());
    }

    /// Every file beneath `dir`.
    fn walkdir(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(walkdir(&path));
            } else {
                files.push(path);
            }
        }
        files
    }
}
