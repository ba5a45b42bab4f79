//! Variables the harness does not own (the system's, insta's): read here like every other, but
//! taken as their owners define them, not by the harness's rule.

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
