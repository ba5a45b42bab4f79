//! What the agent's own program needs to be read: the executable, and for an npm package (the
//! OpenCode of `node_modules/.bin/opencode`) its package and the platform packages it installed.

use std::path::{Path, PathBuf};

/// The paths to allow reading and executing for `program` to run: its executable (symlinks
/// resolved, since a rule holds for the file it resolves to) and, when that lies inside an npm
/// package under `node_modules`, the package's directory and the installed packages it depends
/// on directly (OpenCode's `opencode-ai` runs the binary of `opencode-linux-x64`, or is it).
/// Nothing else of the checkout the package sits in. A bare name is looked up in `PATH`.
pub(crate) fn program_paths(program: &Path) -> Vec<PathBuf> {
    let Some(executable) = resolve(program) else {
        return Vec::new();
    };
    let mut paths = vec![executable.clone()];
    if let Some(package) = npm_package(&executable) {
        paths.extend(dependencies(&package));
        paths.push(package);
    }
    paths
}

/// The `node_modules` holding the npm package of `program` (the checkout's, for the pinned
/// OpenCode of `node_modules/.bin/opencode`), where the packages installed beside it are.
/// `None` for a program outside any npm package.
pub(crate) fn program_node_modules(program: &Path) -> Option<PathBuf> {
    let package = npm_package(&resolve(program)?)?;
    package
        .ancestors()
        .skip(1)
        .find(|dir| dir.file_name() == Some("node_modules".as_ref()))
        .map(Path::to_path_buf)
}

/// `program` with its symlinks resolved; a bare name is looked up in `PATH` first.
fn resolve(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return program.canonicalize().ok();
    }
    let path = crate::settings::path_var()?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .and_then(|found| found.canonicalize().ok())
}

/// The npm package directory holding `executable`: its nearest ancestor with a `package.json`
/// whose parent is a `node_modules` (or a scope inside one).
fn npm_package(executable: &Path) -> Option<PathBuf> {
    let package = executable
        .ancestors()
        .skip(1)
        .find(|dir| dir.join("package.json").is_file())?;
    let parent = package.parent()?;
    let in_node_modules = parent.file_name() == Some("node_modules".as_ref())
        || parent
            .parent()
            .is_some_and(|p| p.file_name() == Some("node_modules".as_ref()));
    in_node_modules.then(|| package.to_path_buf())
}

/// The installed direct dependencies (optional ones included) of the package at `package`,
/// looked up in the `node_modules` that holds it.
fn dependencies(package: &Path) -> Vec<PathBuf> {
    let Some(node_modules) = package
        .ancestors()
        .skip(1)
        .find(|dir| dir.file_name() == Some("node_modules".as_ref()))
    else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(package.join("package.json")) else {
        return Vec::new();
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Vec::new();
    };
    ["dependencies", "optionalDependencies"]
        .iter()
        .filter_map(|field| manifest[field].as_object())
        .flat_map(|deps| deps.keys())
        .filter_map(|name| node_modules.join(name).canonicalize().ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `node_modules/.bin/opencode` → `opencode-ai/bin/opencode`, whose package installed one of
    /// its two platform packages: the executable, its package and the installed one, no more.
    #[test]
    fn an_npm_program_gets_its_package_and_installed_platform_packages() {
        let tmp = tempfile::tempdir().unwrap();
        let checkout = tmp.path().canonicalize().unwrap();
        let modules = checkout.join("node_modules");
        let package = modules.join("opencode-ai");
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::write(
            package.join("package.json"),
            r#"{"optionalDependencies":{"opencode-linux-x64":"1","opencode-darwin-arm64":"1"}}"#,
        )
        .unwrap();
        std::fs::write(package.join("bin/opencode"), "").unwrap();
        std::fs::create_dir_all(modules.join("opencode-linux-x64/bin")).unwrap();
        std::fs::create_dir_all(modules.join(".bin")).unwrap();
        std::os::unix::fs::symlink("../opencode-ai/bin/opencode", modules.join(".bin/opencode"))
            .unwrap();
        std::fs::write(checkout.join("secret.txt"), "").unwrap();

        let paths = program_paths(&modules.join(".bin/opencode"));
        assert_eq!(
            paths,
            [
                package.join("bin/opencode"),
                modules.join("opencode-linux-x64"),
                package.clone(),
            ]
        );
        assert!(!paths.iter().any(|p| p == &checkout || p == &modules));
    }

    /// A program outside any npm package (a cargo-built fixture agent): the file alone.
    #[test]
    fn a_plain_program_gets_its_file_alone() {
        let exe = std::env::current_exe().unwrap().canonicalize().unwrap();
        assert_eq!(program_paths(&exe), [exe]);
        let sh = program_paths(Path::new("sh"));
        assert_eq!(sh.len(), 1, "{sh:?}");
        assert!(sh[0].is_absolute());
        assert!(program_paths(Path::new("/no/such/program")).is_empty());
    }
}
