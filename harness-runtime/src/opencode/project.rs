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
/// A project's config file, found from a directory up to its project's work tree.
const CONFIG_FILE: &str = "opencode.json";

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

/// Writes the project's own config (a shared server's scenario: its provider and permission),
/// and keeps it out of what OpenCode's file tools list: they skip what git ignores, and the
/// file is the harness's, not the scenario's work.
pub(crate) fn write_project_config(
    workspace: &Path,
    config: &serde_json::Value,
) -> std::io::Result<()> {
    let info = workspace.join(".git").join("info");
    std::fs::create_dir_all(&info)?;
    std::fs::write(info.join("exclude"), format!("/{CONFIG_FILE}\n"))?;
    std::fs::write(workspace.join(CONFIG_FILE), config.to_string())
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
