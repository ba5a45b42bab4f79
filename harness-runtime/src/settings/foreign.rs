//! Variables the harness does not own (the system's, CI's, cargo's, nextest's, insta's): read
//! here like every other, but taken as their owners define them, not by the harness's rule.

use std::ffi::OsString;
use std::path::PathBuf;

use super::names;
use super::rule::raw;

/// `PATH`, as the OS holds it (`std::env::split_paths` reads it).
pub(crate) fn path_var() -> Option<OsString> {
    raw(names::PATH)
}

/// Whether `INSTA_UPDATE=always` asks insta to overwrite snapshots.
pub(crate) fn insta_overwrites() -> bool {
    raw(names::INSTA_UPDATE).is_some_and(|value| value == "always")
}

/// Whether nextest runs this process as one test of its own (`NEXTEST_EXECUTION_MODE=
/// process-per-test`, also while it lists the tests).
pub(crate) fn nextest_process_per_test() -> bool {
    raw(names::NEXTEST_EXECUTION_MODE).is_some_and(|mode| mode == "process-per-test")
}

/// nextest's id of this run (`NEXTEST_RUN_ID`, one per `cargo nextest run`, shared by its
/// processes), when set to non-empty UTF-8. The one read of it: the report groups the run's
/// records under it, and the pool leases across the run when it is a UUID.
pub(crate) fn nextest_run_id() -> Option<String> {
    non_empty(names::NEXTEST_RUN_ID)
}

/// Whether nextest runs this process (`NEXTEST=1`).
pub(crate) fn under_nextest() -> bool {
    raw(names::NEXTEST).is_some_and(|value| value == "1")
}

/// Cargo's target directory when `CARGO_TARGET_DIR` names one.
pub(crate) fn cargo_target_dir() -> Option<PathBuf> {
    raw(names::CARGO_TARGET_DIR)
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// The package cargo runs this binary for (`CARGO_PKG_NAME`, set by `cargo test`/`cargo run`).
pub(crate) fn cargo_package() -> Option<String> {
    non_empty(names::CARGO_PKG_NAME)
}

/// A variable named by someone else (a config's `{env:NAME}`, what OpenCode reads and the fixture
/// agent reads as it does), as `std::env::var` gives it: `None` when unset or not UTF-8.
pub(crate) fn unicode(name: &str) -> Option<String> {
    raw(name)?.into_string().ok()
}

/// Every variable of this process whose name and value are UTF-8 (the redactor's secrets).
pub(crate) fn all_unicode() -> Vec<(String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// `name`'s value when it is UTF-8 and not empty.
fn non_empty(name: &str) -> Option<String> {
    unicode(name).filter(|value| !value.is_empty())
}

/// `CI` as CI services set it: on when set to anything but empty, `0` or `false`, and then its
/// value (`true`, `1`, …) for messages. The one read of `CI`.
pub(crate) fn ci() -> Option<String> {
    ci_value(raw(names::CI).as_deref())
}

/// [`ci`] with the value made explicit.
fn ci_value(raw: Option<&std::ffi::OsStr>) -> Option<String> {
    let value = raw?.to_string_lossy();
    (!matches!(&*value, "" | "0" | "false")).then(|| value.into_owned())
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::ci_value;

    /// Unset, empty, `0` and `false` are off; anything else is on, as CI services set it.
    #[test]
    fn ci_is_on_unless_unset_empty_zero_or_false() {
        for off in [None, Some(""), Some("0"), Some("false")] {
            assert_eq!(ci_value(off.map(OsStr::new)), None, "{off:?}");
        }
        for on in ["true", "1", "yes", "woodpecker"] {
            assert_eq!(ci_value(Some(OsStr::new(on))), Some(on.to_string()));
        }
    }
}
