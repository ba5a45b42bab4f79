//! The isolated root of one agent: workspace, database, XDG dirs, home, tmp, and its logs.

use std::path::{Path, PathBuf};

use super::ModelsCatalog;

/// The directories of one agent, all under one root in the system temp dir.
#[derive(Debug, Clone)]
pub(crate) struct AgentRoot {
    pub(crate) root: PathBuf,
    pub(crate) workspace: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) tmp: PathBuf,
    pub(crate) database: PathBuf,
    pub(crate) xdg_config: PathBuf,
    pub(crate) xdg_data: PathBuf,
    pub(crate) xdg_cache: PathBuf,
    pub(crate) xdg_state: PathBuf,
}

/// `tools::bash_runs` → `tools-bash_runs`: safe in a file name, short enough for socket paths.
fn sanitize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out: String = out.trim_matches('-').chars().take(48).collect();
    if out.is_empty() {
        "scenario".into()
    } else {
        out
    }
}

fn nonce() -> String {
    let mut bytes = [0u8; 6];
    let _ = getrandom::fill(&mut bytes);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}{nanos:08x}")
}

/// OpenCode installs `@opencode-ai/plugin` into its config dir in the background (and fails
/// offline after ~70 s); a config dir that already looks installed stops it.
const PLUGIN_PACKAGE: &str = r#"{"dependencies":{"@opencode-ai/plugin":"*"}}"#;
const PLUGIN_LOCK: &str = r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}"#;

/// Creates `<parent>/live-<name>-<pid>-<nonce>` (sanitized `name`) and returns it canonical, so
/// the paths OpenCode reports (it resolves symlinks) match the redactor's.
pub(crate) fn create_unique_dir(parent: &Path, name: &str) -> std::io::Result<PathBuf> {
    let dir = parent.join(format!(
        "live-{}-{}-{}",
        sanitize(name),
        std::process::id(),
        nonce()
    ));
    // `create_dir` (not `_all`): fails if the name exists, so the directory is ours alone.
    std::fs::create_dir(&dir)?;
    dir.canonicalize()
}

impl AgentRoot {
    /// Creates `live-<scenario>-<pid>-<nonce>` under the temp dir with its whole layout.
    pub(crate) fn create(scenario: &str) -> std::io::Result<Self> {
        Self::create_in(&std::env::temp_dir(), scenario)
    }

    /// Creates `live-<scenario>-<pid>-<nonce>` under `parent` with its whole layout.
    pub(crate) fn create_in(parent: &Path, scenario: &str) -> std::io::Result<Self> {
        let layout = Self::layout(create_unique_dir(parent, scenario)?);
        let created = layout.populate();
        if created.is_err() {
            let _ = std::fs::remove_dir_all(&layout.root);
        }
        created.map(|()| layout)
    }

    /// The layout of the root at `root`, made elsewhere (a warm workspace another process of
    /// the run made).
    pub(crate) fn layout(root: PathBuf) -> Self {
        Self {
            workspace: root.join("workspace"),
            home: root.join("home"),
            tmp: root.join("tmp"),
            database: root.join("opencode").join("database"),
            xdg_config: root.join("xdg").join("config"),
            xdg_data: root.join("xdg").join("data"),
            xdg_cache: root.join("xdg").join("cache"),
            xdg_state: root.join("xdg").join("state"),
            root,
        }
    }

    fn populate(&self) -> std::io::Result<()> {
        for dir in [
            &self.workspace,
            &self.home,
            &self.tmp,
            &self.database,
            &self.xdg_config,
            &self.xdg_data,
            &self.xdg_cache,
            &self.xdg_state,
        ] {
            std::fs::create_dir_all(dir)?;
        }
        let plugin_dir = self.xdg_config.join("opencode");
        std::fs::create_dir_all(plugin_dir.join("node_modules"))?;
        std::fs::write(plugin_dir.join("package.json"), PLUGIN_PACKAGE)?;
        std::fs::write(plugin_dir.join("package-lock.json"), PLUGIN_LOCK)?;
        super::models_catalog::write_empty(&self.root)?;
        super::project::make_own_project(&self.workspace)?;
        Ok(())
    }

    /// `OPENCODE_DB`: absolute, inside the root, so sessions survive a restart on the same root.
    pub(crate) fn db_file(&self) -> PathBuf {
        self.database.join("opencode.db")
    }

    /// Where the server's stdout is copied.
    pub(crate) fn stdout_log(&self) -> PathBuf {
        self.root.join("opencode.stdout.log")
    }

    /// Where the server's stderr is copied.
    pub(crate) fn stderr_log(&self) -> PathBuf {
        self.root.join("opencode.stderr.log")
    }

    /// The hermetic environment of OPENCODE.md: everything the server writes stays in the root,
    /// and nothing reaches the network on its own; `catalog` is the models catalog it reads.
    pub(crate) fn hermetic_env(
        &self,
        config_content: &str,
        catalog: ModelsCatalog,
    ) -> Vec<(String, String)> {
        let path = |p: &Path| p.display().to_string();
        let mut env = vec![
            ("HOME".to_string(), path(&self.home)),
            ("XDG_CONFIG_HOME".into(), path(&self.xdg_config)),
            ("XDG_DATA_HOME".into(), path(&self.xdg_data)),
            ("XDG_CACHE_HOME".into(), path(&self.xdg_cache)),
            ("XDG_STATE_HOME".into(), path(&self.xdg_state)),
            ("TMPDIR".into(), path(&self.tmp)),
            ("OPENCODE_DB".into(), path(&self.db_file())),
            (
                crate::settings::CONFIG_CONTENT.into(),
                config_content.to_string(),
            ),
        ];
        for (name, value) in [
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
            ("OPENCODE_AUTO_SHARE", "false"),
            ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1"),
            ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1"),
            ("OPENCODE_DISABLE_CLAUDE_CODE", "1"),
        ] {
            env.push((name.into(), value.into()));
        }
        env.extend(catalog.env(&self.root));
        env
    }

    /// Registers the root's paths on the redactor, the most specific first. `index` is the
    /// agent's 1-based position in the scenario: the first gets `[root]`, the second `[root-2]`.
    pub(crate) fn register(&self, redactor: &crate::redact::Redactor, index: usize) {
        let suffix = if index <= 1 {
            String::new()
        } else {
            format!("-{index}")
        };
        redactor.add_path(&self.workspace, &format!("[workspace{suffix}]"));
        redactor.add_path(&self.home, &format!("[home{suffix}]"));
        redactor.add_path(&self.root, &format!("[root{suffix}]"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized() {
        assert_eq!(sanitize("tools::bash runs/ok"), "tools-bash-runs-ok");
        assert_eq!(sanitize("::"), "scenario");
        assert!(sanitize(&"x".repeat(200)).len() <= 48);
    }

    #[test]
    fn creates_the_layout_with_the_plugin_seed() {
        let root = AgentRoot::create("unit::layout").unwrap();
        let name = root.root.file_name().unwrap().to_str().unwrap().to_string();
        assert!(name.starts_with(&format!("live-unit-layout-{}-", std::process::id())));
        for dir in [&root.workspace, &root.database, &root.xdg_state, &root.tmp] {
            assert!(dir.is_dir());
        }
        // Its own OpenCode project, not the `global` one every plain directory shares.
        assert!(root.workspace.join(".git").join("opencode").is_file());
        let plugin = root.xdg_config.join("opencode");
        assert!(plugin.join("node_modules").is_dir());
        assert_eq!(
            std::fs::read_to_string(plugin.join("package.json")).unwrap(),
            PLUGIN_PACKAGE
        );
        let env = root.hermetic_env("{}", ModelsCatalog::Empty);
        let db = env.iter().find(|(k, _)| k == "OPENCODE_DB").unwrap();
        assert!(Path::new(&db.1).is_absolute());
        // The empty catalog the environment names is in the layout.
        let (_, catalog) = ModelsCatalog::Empty.env(&root.root).unwrap();
        assert!(env.contains(&("OPENCODE_MODELS_PATH".into(), catalog.clone())));
        assert_eq!(std::fs::read_to_string(catalog).unwrap(), "{}");
        let other = AgentRoot::create("unit::layout").unwrap();
        assert_ne!(root.root, other.root);
        std::fs::remove_dir_all(&root.root).unwrap();
        std::fs::remove_dir_all(&other.root).unwrap();
    }
}
