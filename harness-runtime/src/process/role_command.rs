//! How this process re-executes its own binary in a helper role (the reaper, the sandbox
//! launcher): the binary itself by default, or the command a test binary names.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The command set by [`set`]; the current executable without arguments otherwise.
static COMMAND: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();

#[cfg(any(test, feature = "testing"))]
/// Overrides how helper roles are started (once per process; later calls are ignored). Test
/// binaries under libtest's own harness, whose `main` cannot dispatch roles, reach them through
/// an ignored test instead.
pub(crate) fn set(program: PathBuf, args: Vec<String>) {
    let _ = COMMAND.set((program, args));
}

/// The program and arguments that start this binary in the role its environment names.
pub(crate) fn get() -> std::io::Result<(PathBuf, Vec<String>)> {
    match COMMAND.get() {
        Some(command) => Ok(command.clone()),
        // The unit-test binary runs libtest's main, not the runner's: reach the role through
        // the runner's ignored entry-point test instead of re-running every test, its output
        // not captured (the launcher says on stderr why it failed).
        None if cfg!(test) => Ok((
            std::env::current_exe()?,
            [
                "--exact",
                "runner::roles::tests::helper_role",
                "--ignored",
                "--nocapture",
                "-q",
            ]
            .map(String::from)
            .to_vec(),
        )),
        None => Ok((std::env::current_exe()?, Vec::new())),
    }
}
