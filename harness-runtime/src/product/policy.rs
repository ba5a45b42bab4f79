//! The sandbox of one product: beyond the system's part, its program and scripts (read-only),
//! its agent's root (writes), its agent's port (TCP connect), and what its command adds.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::ProductCommand;
use crate::sandbox::{Policy, program_paths};

/// The policy of `command` running in `cwd` for the agent whose root is `root` and whose
/// forwarded URL is on `port`.
pub(crate) fn product(command: &ProductCommand, cwd: &Path, root: &Path, port: u16) -> Policy {
    let mut policy = Policy::system();
    for path in program_paths(Path::new(&command.program)) {
        policy.allow_read(path);
    }
    for path in script_paths(&command.args, cwd) {
        policy.allow_read(path);
    }
    for path in &command.read_only {
        policy.allow_read(path);
    }
    policy.allow_write(root);
    for path in &command.writable {
        policy.allow_write(path);
    }
    policy.allow_connect(port);
    for port in &command.connect {
        policy.allow_connect(*port);
    }
    policy
}

/// The script of an interpreter's command line: the first argument that names an existing file
/// (a relative one in `cwd`). Its directory, and every `node_modules` directory and
/// `package.json` file above it: where Node looks for the packages a script imports and for the
/// module type of its package. Later file arguments are the script's input and grant nothing.
/// Symlinks resolved: a rule holds for the file a path resolves to.
fn script_paths(args: &[OsString], cwd: &Path) -> Vec<PathBuf> {
    let Some(script) = args
        .iter()
        .map(|arg| cwd.join(arg))
        .find(|path| path.is_file())
        .and_then(|path| path.canonicalize().ok())
    else {
        return Vec::new();
    };
    let Some(dir) = script.parent() else {
        return Vec::new();
    };
    let mut paths = vec![dir.to_path_buf()];
    for above in dir.ancestors().skip(1) {
        let modules = above.join("node_modules");
        if modules.is_dir() {
            paths.extend(modules.canonicalize().ok());
        }
        let manifest = above.join("package.json");
        if manifest.is_file() {
            paths.extend(manifest.canonicalize().ok());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `<checkout>/examples/app/app.mjs` with `node_modules` and `package.json` at the checkout:
    /// the script's folder, the checkout's `node_modules` and manifest, nothing else of it.
    #[test]
    fn a_script_gets_its_folder_and_the_packages_above_it() {
        let tmp = tempfile::tempdir().unwrap();
        let checkout = tmp.path().canonicalize().unwrap();
        let app = checkout.join("examples/app");
        std::fs::create_dir_all(&app).unwrap();
        std::fs::write(app.join("app.mjs"), "").unwrap();
        std::fs::create_dir_all(checkout.join("node_modules/@opencode-ai/sdk")).unwrap();
        std::fs::write(checkout.join("package.json"), "{}").unwrap();
        std::fs::write(checkout.join("secret.txt"), "").unwrap();

        let relative = ProductCommand::new("node").arg("examples/app/app.mjs");
        // A later file is the script's input: its folder is not the script's.
        let absolute = ProductCommand::new("node")
            .arg(app.join("app.mjs"))
            .arg(checkout.join("secret.txt"));
        for command in [relative, absolute] {
            assert_eq!(
                script_paths(&command.args, &checkout),
                [
                    app.clone(),
                    checkout.join("node_modules"),
                    checkout.join("package.json")
                ]
            );
        }
        // Flags, inline code and directories are not scripts.
        let none = ProductCommand::new("node").args(["-e", "1", "--trace", "examples"]);
        assert!(script_paths(&none.args, &checkout).is_empty());
    }

    #[test]
    fn the_policy_writes_the_root_and_connects_to_the_agent_only() {
        let command = ProductCommand::new("sh")
            .read_only("/srv/fixtures")
            .writable("/srv/out")
            .connect(9);
        let policy = product(&command, Path::new("/"), Path::new("/tmp/root"), 4096);
        assert!(policy.write.contains(&PathBuf::from("/tmp/root")));
        assert!(policy.write.contains(&PathBuf::from("/srv/out")));
        assert!(policy.read.contains(&PathBuf::from("/srv/fixtures")));
        assert!(!policy.write.contains(&PathBuf::from("/srv/fixtures")));
        assert_eq!(policy.connect, Some(vec![4096, 9]));
    }
}
