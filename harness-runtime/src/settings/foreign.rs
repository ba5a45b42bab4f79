//! Variables the harness does not own (the system's, CI's, insta's): read here like every other,
//! but taken as their owners define them, not by the harness's rule.

use std::ffi::OsString;

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
