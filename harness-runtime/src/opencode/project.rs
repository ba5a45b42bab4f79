//! Each workspace is an OpenCode project of its own.
//!
//! OpenCode 1.18.33 keys a project on the git repository a directory is in (`Project.resolve`):
//! the id stored in `<git dir>/opencode`, else the `origin` remote, else the first root commit.
//! A directory in no repository is the one `global` project, which every such workspace on a
//! server shares, and with it `always` permission replies and the session list. So every
//! workspace is made a git repository whose stored id is random: unique even for two
//! workspaces with the same content created in the same second, and no `git` process or
//! commit is needed to make it.

use std::path::Path;

/// The file OpenCode reads a repository's project id from, inside its git dir.
const PROJECT_ID_FILE: &str = "opencode";
/// The project's config directory: OpenCode reads its `opencode.json` then `opencode.jsonc`
/// after the project's own `opencode.json` and `opencode.jsonc`, so the last of them outranks
/// every config file a product puts in the workspace.
const CONFIG_DIR: &str = ".opencode";
/// The harness's file in [`CONFIG_DIR`]: the one a product is least likely to write.
const CONFIG_FILE: &str = "opencode.jsonc";
/// OpenCode installs `@opencode-ai/plugin` into every config directory in the background
/// (offline it fails after about 70 s); one that already looks installed stops it, as the
/// agent's own config directory does (`root.rs`).
const PLUGIN_SEED: [(&str, &str); 2] = [
    (
        "package.json",
        r#"{"dependencies":{"@opencode-ai/plugin":"*"}}"#,
    ),
    (
        "package-lock.json",
        r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}"#,
    ),
];
/// What OpenCode writes into a config file that lacks it: present, the file is left alone.
const SCHEMA: &str = "https://opencode.ai/config.json";

/// Makes `workspace` the work tree of an empty git repository (what `git rev-parse` accepts:
/// `HEAD`, `objects/`, `refs/`) and stores a fresh project id in it. Returns the id.
pub(crate) fn make_own_project(workspace: &Path) -> std::io::Result<String> {
    let git = workspace.join(".git");
    std::fs::create_dir_all(git.join("objects"))?;
    std::fs::create_dir_all(git.join("refs").join("heads"))?;
    std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n")?;
    let id = fresh_id()?;
    std::fs::write(git.join(PROJECT_ID_FILE), &id)?;
    Ok(id)
}

/// Writes the scenario's config where a directory on a shared server finds it above every
/// project config the product writes: `.opencode/opencode.jsonc` in the workspace (a product's
/// `opencode.json` beside it is read and merged beneath, as beneath `OPENCODE_CONFIG_CONTENT`
/// on a server of its own). The directory is seeded so OpenCode installs nothing into it, and
/// kept out of what OpenCode's file tools list: they skip what git ignores, and the files are
/// the harness's, not the scenario's work.
pub(crate) fn write_project_config(
    workspace: &Path,
    config: &serde_json::Value,
) -> std::io::Result<()> {
    let info = workspace.join(".git").join("info");
    std::fs::create_dir_all(&info)?;
    // Only the harness's own files: a product's agents or commands in `.opencode/` stay
    // visible, as on a server of its own.
    let excluded: String = std::iter::once(CONFIG_FILE)
        .chain(PLUGIN_SEED.iter().map(|(name, _)| *name))
        .chain(["node_modules/", ".gitignore"])
        .map(|name| format!("/{CONFIG_DIR}/{name}\n"))
        .collect();
    std::fs::write(info.join("exclude"), excluded)?;
    let dir = workspace.join(CONFIG_DIR);
    std::fs::create_dir_all(dir.join("node_modules"))?;
    for (name, content) in PLUGIN_SEED {
        std::fs::write(dir.join(name), content)?;
    }
    let mut config = config.clone();
    if let Some(object) = config.as_object_mut() {
        object
            .entry("$schema")
            .or_insert_with(|| serde_json::Value::String(SCHEMA.into()));
    }
    std::fs::write(dir.join(CONFIG_FILE), config.to_string())
}

/// 40 random hex digits: the shape of the root-commit ids OpenCode uses otherwise.
fn fresh_id() -> std::io::Result<String> {
    let mut bytes = [0u8; 20];
    getrandom::fill(&mut bytes).map_err(std::io::Error::other)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On a shared server the scenario's config must not be the file a product writes, must
    /// not start an install, and must not show in what the agent's file tools list.
    #[test]
    fn the_config_goes_beside_a_products_own_files_and_out_of_git() {
        let temp = tempfile::tempdir().unwrap();
        let workspace = temp.path();
        make_own_project(workspace).unwrap();
        std::fs::write(workspace.join("opencode.json"), r#"{"username":"product"}"#).unwrap();
        write_project_config(workspace, &serde_json::json!({"model": "scripted/m"})).unwrap();
        let dir = workspace.join(CONFIG_DIR);
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(CONFIG_FILE)).unwrap()).unwrap();
        assert_eq!(
            written,
            serde_json::json!({"model": "scripted/m", "$schema": SCHEMA})
        );
        assert_eq!(
            std::fs::read_to_string(workspace.join("opencode.json")).unwrap(),
            r#"{"username":"product"}"#
        );
        assert!(dir.join("node_modules").is_dir());
        for (name, content) in PLUGIN_SEED {
            assert_eq!(std::fs::read_to_string(dir.join(name)).unwrap(), content);
        }
        // git (and so OpenCode's ripgrep-based tools) sees none of the harness's files, but
        // would see a product's agent in the same directory.
        std::fs::create_dir_all(dir.join("agents")).unwrap();
        std::fs::write(dir.join("agents").join("review.md"), "Review.").unwrap();
        let out = std::process::Command::new("git")
            .args(["status", "--porcelain", "--untracked-files=all"])
            .current_dir(workspace)
            .output()
            .expect("run git");
        assert!(out.status.success(), "{out:?}");
        let listed = String::from_utf8(out.stdout).unwrap();
        let mut listed: Vec<&str> = listed.lines().collect();
        listed.sort_unstable();
        assert_eq!(
            listed,
            ["?? .opencode/agents/review.md", "?? opencode.json"]
        );
    }

    #[test]
    fn two_workspaces_get_different_ids_and_git_accepts_both() {
        let temp = tempfile::tempdir().unwrap();
        let (a, b) = (temp.path().join("a"), temp.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let (id_a, id_b) = (make_own_project(&a).unwrap(), make_own_project(&b).unwrap());
        assert_ne!(id_a, id_b);
        assert_eq!(id_a.len(), 40);
        assert_eq!(
            std::fs::read_to_string(a.join(".git").join(PROJECT_ID_FILE)).unwrap(),
            id_a
        );
        // What OpenCode runs to find the repository must take the hand-made one.
        let out = std::process::Command::new("git")
            .args(["rev-parse", "--show-toplevel", "--git-dir"])
            .current_dir(&a)
            .output()
            .expect("run git (OpenCode runs it to find a workspace's project)");
        assert!(out.status.success(), "{out:?}");
        let top = String::from_utf8(out.stdout).unwrap();
        assert_eq!(
            top.lines().next().map(Path::new),
            Some(a.canonicalize().unwrap().as_path())
        );
    }
}
