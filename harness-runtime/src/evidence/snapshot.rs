//! `live.assert_evidence()`: the recorded evidence as an insta snapshot of the test crate.
//!
//! insta names a snapshot after the function and module that expand its macro, which here is
//! this file, not the scenario. So the name is explicit (`<topic>__<fn>`), the snapshot path
//! is absolute (`<test crate>/snapshots`), and the module prefix is off. `cargo insta test`,
//! `review` and `accept` find the `.snap.new` files there, because the test crate's root is a
//! package root they walk. insta's settings are thread-local; the assertion is synchronous, so
//! binding them around it is correct on any runtime flavour.

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::live::ScenarioInfo;

use super::Evidence;
use crate::redact::Redactor;

impl crate::Live {
    /// Asserts the recorded evidence against `snapshots/<topic>__<fn>.snap` of the test crate.
    ///
    /// A mismatch prints insta's diff and panics (the runner reports the panic as the failure).
    /// What happens to the new value follows insta: `INSTA_UPDATE=new` (the default outside CI)
    /// writes `.snap.new` for `cargo insta review`, `always` overwrites, `no` (the default when
    /// `CI` is set) writes nothing. `LIVE_SNAPSHOT_DIR` moves the snapshot folder elsewhere.
    pub fn assert_evidence(&self) {
        assert_evidence(&self.info, &self.redactor, &self.evidence, None);
    }

    /// Like [`assert_evidence`](Self::assert_evidence), against
    /// `snapshots/<topic>__<fn>@<name>.snap`: for a scenario that checks evidence more than once.
    /// Characters other than ASCII letters, digits, `-`, `_` and `.` in `name` become `_`.
    pub fn assert_evidence_named(&self, name: &str) {
        assert!(
            !name.trim().is_empty(),
            "assert_evidence_named needs a non-empty name"
        );
        assert_evidence(&self.info, &self.redactor, &self.evidence, Some(name));
    }
}

/// `LIVE_SNAPSHOT_DIR`: where snapshots are read and written instead of `<test crate>/snapshots`.
/// The harness's self-tests use it to write throwaway snapshots into a temp dir; a relative
/// path is taken from the test crate's root.
pub(crate) use crate::settings::SNAPSHOT_DIR as SNAPSHOT_DIR_ENV;

/// The snapshot directory of the test crate at `manifest_dir`, given the override `dir`.
fn snapshot_dir_with(
    manifest_dir: &std::path::Path,
    dir: Option<std::path::PathBuf>,
) -> std::path::PathBuf {
    match dir {
        Some(dir) => manifest_dir.join(dir),
        None => manifest_dir.join("snapshots"),
    }
}

/// `<topic>::<fn>` → `<topic>__<fn>`, the snapshot file's stem.
pub(crate) fn snapshot_stem(scenario: &str) -> String {
    scenario.replace("::", "__")
}

fn sanitize(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn assert_evidence(
    info: &ScenarioInfo,
    redactor: &Redactor,
    evidence: &Evidence,
    variant: Option<&str>,
) {
    let stem = snapshot_stem(&info.name);
    let variant = variant.map(sanitize);
    let name = match &variant {
        Some(v) => format!("{stem}@{v}.snap"),
        None => format!("{stem}.snap"),
    };
    // Shown relative to where the reader configured it: no temp or home paths in messages.
    // The runner reports an invalid LIVE_SNAPSHOT_DIR before any trial; elsewhere, here.
    let configured = crate::settings::snapshot_dir().unwrap_or_else(|invalid| panic!("{invalid}"));
    let file = match &configured {
        Some(_) => format!("${SNAPSHOT_DIR_ENV}/{name}"),
        None => format!("snapshots/{name}"),
    };
    let dir = snapshot_dir_with(&info.manifest_dir, configured);
    // `INSTA_UPDATE=always` is how a corrupt snapshot is re-recorded: let insta overwrite it.
    let overwrite = crate::settings::insta_overwrites();
    if let Some(problem) = super::stored::corruption(&dir.join(&name)).filter(|_| !overwrite) {
        panic!(
            "{}",
            redactor.redact(&format!(
                "the accepted snapshot `{file}` of `{}` is corrupt ({problem}): restore it from \
                 version control, or delete it (or set INSTA_UPDATE=always) and run again to \
                 record the evidence anew",
                info.name
            ))
        );
    }

    let mut settings = insta::Settings::new();
    settings.set_snapshot_path(dir);
    settings.set_prepend_module_to_snapshot(false);
    if let Some(v) = &variant {
        settings.set_snapshot_suffix(v.clone());
    }
    settings.set_description(format!("evidence of the live scenario `{}`", info.name));
    settings.set_info(&serde_json::json!({ "scenario": info.name }));
    // The expression would be this file's variable name: noise in every snapshot.
    settings.set_omit_expression(true);

    let outcome = catch_unwind(AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_yaml_snapshot!(stem.clone(), evidence));
    }));
    let Err(payload) = outcome else { return };

    let native = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    match native {
        Some(message) if message.starts_with("snapshot assertion for") => panic!(
            "{}",
            redactor.redact(&format!(
                "the evidence of `{}` does not match `{file}` (insta printed the diff above): \
                 review it with `cargo insta test --test live --review`, or accept every \
                 pending snapshot with `cargo insta accept`",
                info.name
            ))
        ),
        Some(message) => panic!(
            "{}",
            redactor.redact(&format!(
                "the evidence snapshot `{file}` of `{}` could not be checked: {message}",
                info.name
            ))
        ),
        None => resume_unwind(payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_dir_defaults_to_the_crate_and_honours_the_override() {
        let crate_dir = std::path::Path::new("/crate");
        let dir = |v: Option<&str>| snapshot_dir_with(crate_dir, v.map(Into::into));
        assert_eq!(dir(None), crate_dir.join("snapshots"));
        assert_eq!(dir(Some("other")), crate_dir.join("other"));
        assert_eq!(
            dir(Some("/elsewhere/snaps")),
            std::path::Path::new("/elsewhere/snaps")
        );
    }

    #[test]
    fn names() {
        assert_eq!(snapshot_stem("tools::bash_runs"), "tools__bash_runs");
        assert_eq!(snapshot_stem("a::b::c"), "a__b__c");
        assert_eq!(sanitize(" after abort/2 "), "after_abort_2");
    }
}
