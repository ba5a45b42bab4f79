//! A program file that runs a [`Launch`] confined, with the arguments it is called with: for a
//! program that takes the path of another to run (OpenCode's `shell`). A `/bin/sh` script: it
//! hands its arguments (`LIVE_SANDBOX_ARG_<n>`), its variables and the launch to the launcher,
//! which confines itself and `exec`s the launch's program with those arguments appended.

use super::{Launch, SandboxError};
use crate::settings::{self, Role};

/// The script's text. `env` is set for the program (over what the caller passes in); the launch
/// must name no role (the launcher's own is removed before the program runs).
pub(crate) fn script(launch: &Launch, env: &[(String, String)]) -> Result<String, SandboxError> {
    let problem = |problem: String| SandboxError::Launch {
        var: settings::SANDBOX_LAUNCH,
        problem,
    };
    let (launcher, launcher_args) =
        crate::process::role_command().map_err(|e| problem(e.to_string()))?;
    let text = serde_json::to_string(launch).map_err(|e| problem(e.to_string()))?;
    let prefix = settings::SANDBOX_ARG;
    let mut script = format!(
        "#!/bin/sh\n\
         # Runs `{program} <arguments>` confined by the live-test harness's sandbox launcher.\n\
         n=0\n\
         for arg\n\
         do\n\
         \texport \"{prefix}$n=$arg\"\n\
         \tn=$((n + 1))\n\
         done\n\
         unset \"{prefix}$n\"\n",
        program = launch.program.display(),
    );
    let exports = env
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()));
    let exports = exports.chain([
        (settings::ROLE, Role::SandboxLauncher.value()),
        (settings::SANDBOX_LAUNCH, text.as_str()),
    ]);
    for (name, value) in exports {
        script.push_str(&format!("export {name}={}\n", quote(value)));
    }
    script.push_str("exec ");
    script.push_str(&quote(&launcher.to_string_lossy()));
    for arg in launcher_args {
        script.push(' ');
        script.push_str(&quote(&arg));
    }
    script.push('\n');
    Ok(script)
}

/// `text` as one word of `/bin/sh`: single-quoted, each `'` closed, escaped and reopened.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    use super::super::Policy;
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_dollars() {
        let tricky = r#"it's "$HOME" `x` \ $(y)"#;
        let out = Command::new("/bin/sh")
            .args(["-c", &format!("printf %s {}", quote(tricky))])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), tricky);
    }

    /// The wrapper passes every argument through unchanged (spaces, quotes, newlines, an empty
    /// one), sets its variables, and the program runs confined: it cannot write beside the
    /// wrapper, only in its root.
    #[test]
    fn the_wrapper_passes_its_arguments_to_the_confined_program() {
        if super::super::kernel::abi().is_err() {
            // Confining is tested where Landlock is (launcher.rs); the passing needs it too.
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let dir_path = dir.path().canonicalize().unwrap();
        let root = dir_path.join("root");
        std::fs::create_dir(&root).unwrap();
        let mut policy = Policy::system();
        policy.allow_write(&root);
        let launch = Launch {
            program: "/bin/bash".into(),
            args: Vec::new(),
            role: None,
            policy,
        };
        let env = [("LIVE_WRAPPED_TEST".to_string(), "it's set".to_string())];
        let wrapper = dir_path.join("bash");
        std::fs::write(&wrapper, script(&launch, &env).unwrap()).unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let command = format!(
            "printf '[%s]' \"$0\" \"$1\" \"$2\" \"$LIVE_WRAPPED_TEST\" \"${{{}0-unset}}\"; \
             echo x > {root}/in.txt && echo wrote-root; \
             echo x > {dir}/beside.txt || echo refused-beside",
            settings::SANDBOX_ARG,
            root = root.display(),
            dir = dir_path.display(),
        );
        let out = Command::new(&wrapper)
            .args(["-c", &command, "first arg", "it's\nsecond", ""])
            .env("LIVE_SANDBOX_ARG_9", "stray")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("[first arg][it's\nsecond][][it's set][unset]"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(stdout.contains("wrote-root"), "{stdout}");
        assert!(stdout.contains("refused-beside"), "{stdout}");
        assert!(!dir_path.join("beside.txt").exists());
    }
}
