//! The shell of a scenario's workspace on a shared server. OpenCode 1.18.33 runs every bash tool
//! command of a directory as `<its config's "shell"> -c <command>`; a lease's config names a
//! wrapper that confines the command to the scenario's own root and model (the sandbox launcher
//! with the lease's policy, stacked on the shared server's) and then runs the shell OpenCode
//! would have run. The path is part of the config OpenCode caches per booted directory, so it
//! depends only on the server and the scenario's root: a reused workspace keeps its shell.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::opencode::root::AgentRoot;
use crate::opencode::sandbox_plan;
use crate::sandbox::{Launch, wrapper_script};

/// The folder of the shared server's root that holds its leases' shells: out of reach of the
/// commands it confines (they write only beneath their own root).
const SHELLS_DIR: &str = "shells";
/// The config key naming the program OpenCode runs bash tool commands with.
const SHELL_KEY: &str = "shell";
/// Shells OpenCode refuses as the bash tool's (`Shell.acceptable`).
const REFUSED: [&str; 2] = ["fish", "nu"];

/// `config` for the workspace of `root` on the shared server rooted at `server_root` running
/// `program`, when agents run confined: with a `shell` confining its bash commands to `root`
/// (the shell written first: OpenCode falls back to its own shell, unconfined, when the file is
/// missing) and its `external_directory` permission denying the pool's directory beyond `root`
/// ([`guard`](super::guard)); else unchanged. `config` names the model the commands
/// may reach.
pub(crate) fn confine_config(
    server_root: &Path,
    program: &Path,
    root: &AgentRoot,
    mut config: Value,
) -> std::io::Result<Value> {
    let confined = crate::sandbox::current().is_ok_and(|sandbox| sandbox.is_on());
    if confined {
        let shell = write(server_root, root, program, &config)?;
        if let Some(object) = config.as_object_mut() {
            object.insert(SHELL_KEY.into(), Value::String(shell.display().to_string()));
        }
        let mut pools: Vec<&Path> = [root.root.parent(), server_root.parent()]
            .into_iter()
            .flatten()
            .collect();
        pools.dedup();
        super::guard::deny_the_pool(&mut config, &pools, &root.root, server_root);
    }
    Ok(config)
}

/// Writes the shell of the scenario rooted at `root` on the shared server rooted at
/// `server_root`, running `program` with `config` (the workspace's, naming the scenario's model
/// or a seat's stand-in for it); returns its path. Its commands get the scenario's own `HOME`,
/// `TMPDIR` and XDG directories, as on a server of its own (the shared server's are outside
/// what they may write).
pub(crate) fn write(
    server_root: &Path,
    root: &AgentRoot,
    program: &Path,
    config: &Value,
) -> std::io::Result<PathBuf> {
    let shell = opencode_shell(config.get(SHELL_KEY).and_then(Value::as_str));
    let (policy, _) = sandbox_plan::leased_shell(&root.root, program, config);
    let launch = Launch {
        program: shell.clone(),
        args: Vec::new(),
        role: None,
        policy,
    };
    let path_text = |p: &Path| p.display().to_string();
    let env = [
        ("HOME", &root.home),
        ("TMPDIR", &root.tmp),
        ("XDG_CONFIG_HOME", &root.xdg_config),
        ("XDG_DATA_HOME", &root.xdg_data),
        ("XDG_CACHE_HOME", &root.xdg_cache),
        ("XDG_STATE_HOME", &root.xdg_state),
    ]
    .map(|(name, dir)| (name.to_string(), path_text(dir)));
    let text = wrapper_script(&launch, &env).map_err(std::io::Error::other)?;
    let root_name = root.root.file_name().unwrap_or(OsStr::new("scenario"));
    let dir = server_root.join(SHELLS_DIR).join(root_name);
    std::fs::create_dir_all(&dir)?;
    // Named as the shell it runs: OpenCode describes the bash tool to the model by the name.
    let name = shell.file_name().unwrap_or(OsStr::new("sh"));
    let path = dir.join(name);
    // Renamed into place: a reused workspace's shell is never seen half written.
    let staged = dir.join(".staged");
    std::fs::write(&staged, text)?;
    std::fs::set_permissions(&staged, std::fs::Permissions::from_mode(0o755))?;
    std::fs::rename(&staged, &path)?;
    Ok(path)
}

/// The shell OpenCode 1.18.33's bash tool runs (`Shell.acceptable`): the config's `shell` (a
/// product's setting), else `SHELL` — an absolute path to a file, or a name found in `PATH` —
/// unless it is fish or nu; else `bash` from `PATH`, else `/bin/sh`. The shared server inherits
/// both variables from this process, as a server of its own does.
fn opencode_shell(configured: Option<&str>) -> PathBuf {
    let wanted = match configured {
        Some(shell) => Some(shell.into()),
        None => crate::settings::raw(crate::settings::SHELL),
    };
    let wanted = wanted.filter(|shell| {
        let name = Path::new(shell).file_name().unwrap_or_default();
        !REFUSED.contains(&name.to_string_lossy().to_lowercase().as_str())
    });
    wanted
        .and_then(|shell| {
            let shell = PathBuf::from(shell);
            if shell.is_absolute() {
                shell.is_file().then_some(shell)
            } else {
                which(&shell)
            }
        })
        .or_else(|| which(Path::new("bash")))
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

/// The first executable file named `name` in `PATH`, as found (symlinks kept, as Bun's `which`).
fn which(name: &Path) -> Option<PathBuf> {
    let path = crate::settings::path_var()?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wrapper sits in the server's root, named as the shell, executable; it names the
    /// scenario's own directories and the launcher, and writing it again replaces it.
    #[test]
    fn the_shell_is_written_beside_the_scenario_under_the_servers_root() {
        let temp = tempfile::tempdir().unwrap();
        let pool = temp.path().canonicalize().unwrap();
        let server_root = pool.join("server");
        std::fs::create_dir(&server_root).unwrap();
        let root = AgentRoot::create_in(&pool, "unit::shell").unwrap();
        let config = serde_json::json!({"provider": {"scripted": {"options": {
            "baseURL": "http://127.0.0.1:4242/v1"}}}});
        let shell = write(&server_root, &root, Path::new("sh"), &config).unwrap();
        assert!(shell.starts_with(server_root.join(SHELLS_DIR)));
        assert!(!shell.starts_with(&root.root));
        assert_eq!(shell.file_name(), opencode_shell(None).file_name());
        let mode = std::fs::metadata(&shell).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        let text = std::fs::read_to_string(&shell).unwrap();
        assert!(text.starts_with("#!/bin/sh\n"), "{text}");
        assert!(text.contains(&format!("export TMPDIR='{}'", root.tmp.display())));
        assert!(text.contains("4242"), "{text}");
        let again = write(&server_root, &root, Path::new("sh"), &config).unwrap();
        assert_eq!(again, shell);
        let entries = std::fs::read_dir(shell.parent().unwrap()).unwrap().count();
        assert_eq!(entries, 1);
    }

    /// A product's `shell` is what the wrapper runs (and is named as), as OpenCode would run
    /// it; one OpenCode refuses is replaced as OpenCode replaces it.
    #[test]
    fn a_products_shell_is_the_one_run() {
        assert_eq!(opencode_shell(Some("/bin/sh")), PathBuf::from("/bin/sh"));
        let fallback = opencode_shell(Some("/usr/bin/fish"));
        assert_ne!(fallback.file_name(), Some(OsStr::new("fish")));
        assert!(fallback.is_file());
        assert!(opencode_shell(Some("sh")).ends_with("sh"));
    }

    #[test]
    fn opencodes_shell_is_an_executable_file() {
        let shell = opencode_shell(None);
        assert!(
            shell.is_absolute() && shell.is_file(),
            "{}",
            shell.display()
        );
    }
}
