//! Finding the `opencode` executable: `LIVE_OPENCODE_BIN`, the nearest `node_modules/.bin`, `PATH`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::ProvisionError;

/// The `opencode` to run: `LIVE_OPENCODE_BIN` if set, else the nearest
/// `node_modules/.bin/opencode` walking up from `manifest_dir` and then from the current
/// directory, else `opencode` on `PATH`. An invalid `LIVE_OPENCODE_BIN` is the error.
pub(crate) fn find_opencode(manifest_dir: &Path) -> Result<PathBuf, ProvisionError> {
    let explicit = crate::settings::opencode_bin()
        .map_err(|invalid| ProvisionError::Config(invalid.to_string()))?;
    let cwd = std::env::current_dir().ok();
    let mut starts = vec![manifest_dir];
    starts.extend(cwd.as_deref());
    locate(explicit, &starts, crate::settings::path_var())
}

/// The version of the OpenCode [`find_opencode`] runs, without running it: the `version` of the
/// npm package it belongs to (`node_modules/opencode-ai/package.json` for the pinned one; the
/// executable is `<package>/bin/…`, reached through `.bin`'s symlink). `None` when it is not in
/// such a package (a binary of its own under `LIVE_OPENCODE_BIN`). Read once per process.
pub(crate) fn installed_version(manifest_dir: &Path) -> Option<String> {
    static VERSION: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    VERSION
        .get_or_init(|| package_version(&find_opencode(manifest_dir).ok()?))
        .clone()
}

/// The `version` of the npm package holding the executable `program`.
fn package_version(program: &Path) -> Option<String> {
    let program = std::fs::canonicalize(program).ok()?;
    program.ancestors().skip(1).take(3).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let package: serde_json::Value = serde_json::from_str(&text).ok()?;
        package.get("bin")?;
        Some(package.get("version")?.as_str()?.to_owned())
    })
}

/// [`find_opencode`] with its inputs made explicit.
pub(crate) fn locate(
    explicit: Option<PathBuf>,
    starts: &[&Path],
    path: Option<OsString>,
) -> Result<PathBuf, ProvisionError> {
    if let Some(explicit) = explicit {
        return if is_executable(&explicit) {
            Ok(explicit)
        } else {
            Err(ProvisionError::BadBinaryOverride)
        };
    }
    locate_installed("opencode", starts, path).ok_or(ProvisionError::OpenCodeNotFound)
}

/// The executable `name` an `npm ci` of the test crate installed (another agent pinned beside
/// OpenCode, e.g. Qwen Code's `qwen`): the nearest `node_modules/.bin/<name>` walking up from
/// `manifest_dir` and then from the current directory, else `name` on `PATH`.
pub(crate) fn find_installed(name: &str, manifest_dir: &Path) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok();
    let mut starts = vec![manifest_dir];
    starts.extend(cwd.as_deref());
    locate_installed(name, &starts, crate::settings::path_var())
}

fn locate_installed(name: &str, starts: &[&Path], path: Option<OsString>) -> Option<PathBuf> {
    for start in starts {
        for dir in start.ancestors() {
            let candidate = dir.join("node_modules").join(".bin").join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    std::env::split_paths(&path?)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    // `metadata` follows symlinks: `node_modules/.bin/opencode` is one.
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn executable(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_version_is_the_package_of_the_executable() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("node_modules/opencode-ai");
        executable(&package.join("bin/opencode.exe"));
        std::fs::write(
            package.join("package.json"),
            r#"{"name": "opencode-ai", "version": "1.18.33", "bin": {"opencode": "./bin/opencode.exe"}}"#,
        )
        .unwrap();
        let link = dir.path().join("node_modules/.bin/opencode");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("../opencode-ai/bin/opencode.exe", &link).unwrap();
        assert_eq!(package_version(&link).as_deref(), Some("1.18.33"));
        let alone = dir.path().join("alone/opencode");
        executable(&alone);
        assert_eq!(package_version(&alone), None);
    }

    #[test]
    fn nothing_found_says_run_npm_ci() {
        let dir = tempfile::tempdir().unwrap();
        let err = locate(None, &[dir.path()], Some(dir.path().into())).unwrap_err();
        assert!(matches!(err, ProvisionError::OpenCodeNotFound));
        assert_eq!(err.to_string(), "opencode not found: run `npm ci`");
    }

    #[test]
    fn nearest_node_modules_wins_over_path() {
        let dir = tempfile::tempdir().unwrap();
        let near = dir.path().join("a/node_modules/.bin/opencode");
        let far = dir.path().join("node_modules/.bin/opencode");
        let on_path = dir.path().join("bin/opencode");
        for p in [&near, &far, &on_path] {
            executable(p);
        }
        let start = dir.path().join("a/b/c");
        let path = Some(dir.path().join("bin").into_os_string());
        assert_eq!(locate(None, &[&start], path.clone()).unwrap(), near);
        assert_eq!(locate(None, &[dir.path()], path.clone()).unwrap(), far);
        let elsewhere = tempfile::tempdir().unwrap();
        assert_eq!(locate(None, &[elsewhere.path()], path).unwrap(), on_path);
    }

    #[test]
    fn explicit_override_is_used_or_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("my-opencode");
        executable(&bin);
        assert_eq!(locate(Some(bin.clone()), &[], None).unwrap(), bin);
        let missing = dir.path().join("missing");
        assert!(matches!(
            locate(Some(missing), &[], None),
            Err(ProvisionError::BadBinaryOverride)
        ));
    }
}
