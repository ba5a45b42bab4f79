//! The harness of the test binaries whose tests need something `cargo test` does not build
//! (`harness = false`, libtest-mimic): a test runs, or is skipped with its reason, or — under
//! `CI` or `LIVE_STRICT=1` — fails saying what to install. The decision is the runtime's own
//! ([`MissingPrerequisite`]), so these tests and the scenarios follow one rule. libtest's own
//! harness cannot skip at run time: it could only report such a test `ok`.
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     prerequisites::run([
//!         harness_selftest::test!(parses_the_config),
//!         harness_selftest::test!(starts_a_server).needs(Prerequisite::OpenCode),
//!     ])
//! }
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use harness_runtime::testing::MissingPrerequisite;
use libtest_mimic::{Arguments, Completion, Failed, Trial};

use crate::run::Running;
use crate::sandbox::scrubbed_command;

/// Something a test needs from the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prerequisite {
    /// Real OpenCode, found as the harness finds it (`LIVE_OPENCODE_BIN`, `node_modules`, `PATH`).
    OpenCode,
    /// `cargo nextest`.
    Nextest,
    /// Headless Chromium ([`chromium`]).
    Chromium,
    /// `node` on `PATH`, and this npm package installed in the workspace's `node_modules` by
    /// `npm ci`.
    NodePackage(&'static str),
    /// `script` from util-linux on `PATH`, which gives a terminal program a pseudo-terminal.
    Script,
}

impl Prerequisite {
    /// Why it is missing, saying what to install; `None` when it is there.
    pub fn missing(self) -> Option<String> {
        match self {
            Prerequisite::OpenCode => harness_runtime::testing::find_opencode(workspace())
                .err()
                .map(|e| e.to_string()),
            Prerequisite::Nextest => {
                let runs = cargo()
                    .args(["nextest", "--version"])
                    .output()
                    .is_ok_and(|o| o.status.success());
                (!runs).then(|| {
                    "cargo-nextest is not installed: install it with \
                     `cargo install cargo-nextest --locked`"
                        .to_string()
                })
            }
            Prerequisite::Chromium => chromium().is_none().then(|| {
                "chromium is not installed: install it with `sudo apt-get install -y \
                 --no-install-recommends chromium` (Debian/Ubuntu), or put a `chromium` on PATH"
                    .to_string()
            }),
            Prerequisite::NodePackage(package) => {
                if on_path(&["node"]).is_none() {
                    return Some(
                        "node is not on PATH: install Node.js 20 or later, then run `npm ci` in \
                         the workspace root"
                            .to_string(),
                    );
                }
                let installed = workspace().ancestors().any(|dir| {
                    dir.join("node_modules")
                        .join(package)
                        .join("package.json")
                        .is_file()
                });
                (!installed).then(|| {
                    format!(
                        "{package} is not installed in node_modules: run `npm ci` in the \
                         workspace root (it installs the packages pinned in package.json)"
                    )
                })
            }
            Prerequisite::Script => on_path(&["script"]).is_none().then(|| {
                "script is not on PATH: it gives the TUI a terminal; install util-linux".to_string()
            }),
        }
    }
}

/// Where the workspace's packages are looked for: this crate's directory and its ancestors.
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The first of `names` found in a directory of `PATH`.
fn on_path(names: &[&str]) -> Option<PathBuf> {
    in_dirs(
        &std::env::split_paths(&std::env::var_os("PATH")?).collect::<Vec<_>>(),
        names,
    )
}

/// The first of `names` found in one of `dirs`.
fn in_dirs(dirs: &[PathBuf], names: &[&str]) -> Option<PathBuf> {
    dirs.iter()
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// Headless Chromium: `chromium` or `chromium-browser` on `PATH`, else in `/usr/bin`.
pub fn chromium() -> Option<PathBuf> {
    const NAMES: [&str; 2] = ["chromium", "chromium-browser"];
    on_path(&NAMES).or_else(|| in_dirs(&[PathBuf::from("/usr/bin")], &NAMES))
}

/// The cargo that runs these tests (`CARGO`), else the one on `PATH`, without the variables
/// Cargo set for this test or bench process (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*` …). A build
/// script that reruns when one of them changes (ring's, on `CARGO_MANIFEST_DIR`) would see them
/// set in the nested build and unset in the next `cargo test`, and each would rebuild it and
/// everything above it (seen in CI: 45 s to rebuild the live suite after the workspace's tests).
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        if name.to_str().is_some_and(set_by_cargo_for_this_process) {
            command.env_remove(name);
        }
    }
    command
}

/// Whether Cargo sets `name` for the process it runs (a test, a bench), not for the user.
fn set_by_cargo_for_this_process(name: &str) -> bool {
    const PREFIXES: [&str; 4] = [
        "CARGO_PKG_",
        "CARGO_MANIFEST_",
        "CARGO_CRATE_",
        "CARGO_BIN_",
    ];
    const NAMES: [&str; 3] = ["CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR", "OUT_DIR"];
    PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || NAMES.contains(&name)
}

/// One test of a binary run by [`run`].
pub struct Test {
    name: String,
    body: Box<dyn FnOnce() + Send>,
    ignore: Option<&'static str>,
    needs: Vec<Prerequisite>,
}

impl Test {
    /// A test named `name` (as libtest would name it: see [`test!`](crate::test)); it fails
    /// when `body` panics.
    pub fn new(name: impl Into<String>, body: impl FnOnce() + Send + 'static) -> Self {
        Test {
            name: name.into(),
            body: Box::new(body),
            ignore: None,
            needs: Vec::new(),
        }
    }

    /// Not run unless asked for (`--ignored`, `--include-ignored`), like `#[ignore = reason]`.
    pub fn ignore(mut self, reason: &'static str) -> Self {
        self.ignore = Some(reason);
        self
    }

    /// Needs `prerequisite`: skipped with its reason where it is missing, failed under `CI` or
    /// `LIVE_STRICT=1`.
    pub fn needs(mut self, prerequisite: Prerequisite) -> Self {
        self.needs.push(prerequisite);
        self
    }

    /// The libtest-mimic trial. A skip is reported at run time with its reason; when listing
    /// (and under `--ignored`, which keeps only trials flagged ignored) the same tests are
    /// flagged ignored up front, so nextest, which decides from `--list`, shows them skipped.
    fn trial(self, args: &Arguments) -> Trial {
        let missing = self
            .needs
            .iter()
            .find_map(|p| p.missing())
            .map(MissingPrerequisite::decide);
        let skipped =
            self.ignore.is_some() || matches!(missing, Some(MissingPrerequisite::Skip(_)));
        let run_ignored = args.ignored || args.include_ignored;
        let Test {
            name, body, ignore, ..
        } = self;
        Trial::ignorable_test(name, move || {
            if let (Some(reason), false) = (ignore, run_ignored) {
                return Ok(Completion::ignored_with(reason));
            }
            match missing {
                None => {
                    body();
                    Ok(Completion::Completed)
                }
                Some(MissingPrerequisite::Skip(reason)) => Ok(Completion::ignored_with(reason)),
                Some(MissingPrerequisite::Fail(message)) => Err(Failed::from(message)),
            }
        })
        .with_ignored_flag(skipped && (args.list || args.ignored))
    }
}

/// Runs `tests` as libtest would, with its command line (filters, `--exact`, `--list`,
/// `--ignored`, `--test-threads`, …); the exit code is libtest's.
pub fn run(tests: impl IntoIterator<Item = Test>) -> ExitCode {
    // This binary re-executed in a helper role runs it before libtest prints anything: a shared
    // workspace's shell runs through the sandbox launcher, and its output is the command's.
    if let Some(code) = harness_runtime::runner::run_role() {
        return code;
    }
    let args = Arguments::from_args();
    let trials = tests.into_iter().map(|test| test.trial(&args)).collect();
    libtest_mimic::run(&args, trials).exit_code()
}

/// Proves the missing-prerequisite path of this test binary's `test` by running the binary again
/// with `hide` applied to its command (which must make the prerequisite missing): normally (and
/// with `CI` set to `false` or `0`) `test` is skipped with a reason starting with `reason` and
/// listed as ignored, for nextest; under `CI=true`, `CI=1` and `LIVE_STRICT=1` it fails with the
/// reason and what made it fail, and is listed to be run.
pub fn assert_skipped_without(test: &str, reason: &str, hide: impl Fn(&mut Command)) {
    let this = std::env::current_exe().expect("this test binary");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = scrubbed_command(&this, args);
        hide(&mut command);
        command.envs(env.iter().copied());
        Running::start(command).wait(harness_runtime::scaled(Duration::from_secs(60)))
    };
    let exact = ["--exact", test];
    let list = ["--list", "--format", "terse", "--ignored"];

    for normal in [&[][..], &[("CI", "false")][..], &[("CI", "0")][..]] {
        run(&exact, normal)
            .assert_code(0)
            .assert_result(test, &format!("ignored ({reason}"))
            .assert_stdout("1 ignored");
        run(&list, normal).assert_stdout(&format!("{test}: test"));
    }
    for (name, value) in [("CI", "true"), ("CI", "1"), ("LIVE_STRICT", "1")] {
        run(&exact, &[(name, value)])
            .assert_code(101)
            .assert_result(test, "FAILED")
            .assert_stdout(reason)
            .assert_stdout(&format!(
                "({name}={value} makes a missing prerequisite a failure)"
            ));
        // Not a skip: listed to be run, so nextest runs it and reports the failure.
        let listed = run(&list, &[(name, value)]);
        assert!(!listed.shows(test), "{name}={value}\n{listed}");
    }
}

/// [`assert_skipped_without`] for OpenCode: `test` needs it, and `LIVE_OPENCODE_BIN` naming no
/// file makes it missing.
pub fn assert_skipped_without_opencode(test: &str) {
    let empty = tempfile::tempdir().expect("a temp dir");
    assert_skipped_without(
        test,
        "LIVE_OPENCODE_BIN does not name an executable file",
        |command| {
            command.env("LIVE_OPENCODE_BIN", empty.path().join("opencode"));
        },
    );
}

/// `module::function` as libtest names a test: its module path without the crate.
#[doc(hidden)]
pub fn libtest_name(module_path: &str, function: &str) -> String {
    match module_path.split_once("::") {
        Some((_crate, module)) => format!("{module}::{function}"),
        None => function.to_string(),
    }
}

/// `test!(function)`: a [`Test`] running `function`, named as libtest would name it.
#[macro_export]
macro_rules! test {
    ($function:ident) => {
        $crate::prerequisites::Test::new(
            $crate::prerequisites::libtest_name(module_path!(), stringify!($function)),
            $function,
        )
    };
}

#[cfg(test)]
mod tests {
    use super::libtest_name;

    #[test]
    fn names_are_libtests() {
        assert_eq!(libtest_name("hygiene", "f"), "f");
        assert_eq!(libtest_name("reliability::processes", "f"), "processes::f");
        assert_eq!(
            libtest_name("reliability::streams::measured", "f"),
            "streams::measured::f"
        );
    }

    #[test]
    fn a_nested_cargo_gets_none_of_the_variables_cargo_set_for_this_process() {
        let removed = super::cargo()
            .get_envs()
            .filter(|(_, value)| value.is_none())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect::<Vec<_>>();
        // `cargo test` runs this test with them set.
        for name in ["CARGO_MANIFEST_DIR", "CARGO_PKG_NAME"] {
            assert!(
                removed.iter().any(|r| r == name),
                "{name} kept: {removed:?}"
            );
        }
        for kept in [
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_INCREMENTAL",
            "CARGO_PROFILE_DEV_DEBUG",
        ] {
            assert!(!super::set_by_cargo_for_this_process(kept), "{kept}");
        }
    }
}
