//! `live.assert_evidence()`: the recorded evidence as an insta snapshot of the test crate.
//!
//! insta's macros take the place they are expanded in: `file!()` becomes the snapshot's
//! `source:`, and `CARGO_MANIFEST_DIR` the folder where insta runs `cargo metadata` for the
//! workspace (which `source:` is relative to, and where its `insta.yaml` is). Expanded here, they
//! would name this file and this crate's folder: in an adopter's build, the dependency's folder in
//! the cargo registry. So the assertion is expanded in the test crate ([`snapshot_assertion!`],
//! written by `#[live_agent_test]`) and this file does the rest around it: the name
//! (`<topic>__<fn>`), the absolute snapshot path (`<test crate>/snapshots`), the settings, the
//! check for a corrupt file and the failure message. `cargo insta test`, `review` and `accept`
//! find the `.snap.new` files there, because the test crate's root is a package root they walk.
//! insta's settings are thread-local; the assertion is synchronous, so binding them around it is
//! correct on any runtime flavour.
//!
//! [`snapshot_assertion!`]: crate::snapshot_assertion

use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use super::Evidence;
use crate::redact::Redactor;

/// Asserts `evidence` as the insta snapshot `name`, under the insta settings bound around the call.
///
/// Made by `snapshot_assertion!()` in the crate and file the scenario
/// is declared in, which insta then takes for the snapshot's workspace and `source:`.
pub type SnapshotAssertion = fn(name: &str, evidence: &Evidence);

/// A [`SnapshotAssertion`] expanded where it is written: the snapshots it asserts name this file
/// in `source:` (and this line in insta's review), and insta takes this crate's workspace.
///
/// `#[live_agent_test]` writes it for every scenario (as `__private::snapshot_assertion!()`); a
/// `testing::ScenarioInfo` made by hand sets `snapshot_assertion: testing::snapshot_assertion!()`.
#[doc(hidden)]
#[macro_export]
macro_rules! __snapshot_assertion {
    () => {{
        fn assert_evidence_snapshot(name: &str, evidence: &$crate::evidence::Evidence) {
            $crate::__private::insta::assert_yaml_snapshot!(name, evidence);
        }
        assert_evidence_snapshot as $crate::__private::SnapshotAssertion
    }};
}

/// `LIVE_SNAPSHOT_DIR`: where snapshots are read and written instead of `<test crate>/snapshots`.
/// The harness's self-tests use it to write throwaway snapshots into a temp dir; a relative
/// path is taken from the test crate's root. That root is compiled in (`Scenario::manifest_dir`),
/// so a test binary run on another machine needs an absolute path here (see the README).
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

/// Which scenario's snapshot is asserted, and where: what the evidence needs of the scenario.
#[derive(Clone, Copy)]
pub(crate) struct SnapshotTarget<'a> {
    /// `<topic>::<fn>`.
    pub(crate) name: &'a str,
    /// The test crate's manifest dir: `snapshots/` lives below it.
    pub(crate) manifest_dir: &'a std::path::Path,
    /// The assertion expanded in the scenario's crate.
    pub(crate) assertion: SnapshotAssertion,
}

pub(crate) fn assert_evidence(
    info: SnapshotTarget<'_>,
    redactor: &Redactor,
    evidence: &Evidence,
    variant: Option<&str>,
) {
    let stem = snapshot_stem(info.name);
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
    let dir = snapshot_dir_with(info.manifest_dir, configured);
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
    settings.set_snapshot_path(dir.clone());
    settings.set_prepend_module_to_snapshot(false);
    if let Some(v) = &variant {
        settings.set_snapshot_suffix(v.clone());
    }
    settings.set_description(format!("evidence of the live scenario `{}`", info.name));
    settings.set_info(&serde_json::json!({ "scenario": info.name }));
    // The expression would be the assertion's variable name: noise in every snapshot.
    settings.set_omit_expression(true);

    let outcome = catch_unwind(AssertUnwindSafe(|| {
        settings.bind(|| (info.assertion)(&stem, evidence));
    }));
    let Err(payload) = outcome else { return };

    let native = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied());
    match native {
        Some(message) if message.starts_with("snapshot assertion for") => {
            note_mismatch(&file, &dir.join(&name), evidence);
            panic!(
                "{}",
                redactor.redact(&format!(
                    "the evidence of `{}` does not match `{file}` (insta printed the diff above): \
                 review it with `cargo insta test --test {} --review`, or accept every \
                 pending snapshot with `cargo insta accept`",
                    info.name,
                    crate::test_target::running()
                ))
            )
        }
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

/// The run report's snapshot diff: the accepted snapshot against the new evidence (insta's
/// `.snap.new` when it wrote one, else the evidence as JSON).
fn note_mismatch(file: &str, accepted: &std::path::Path, evidence: &Evidence) {
    if !crate::timeline::is_collecting() {
        return;
    }
    let body = |text: String| match text.find("\n---\n") {
        Some(at) => text[at + 5..].to_owned(),
        None => text,
    };
    let old = std::fs::read_to_string(accepted)
        .map(body)
        .unwrap_or_default();
    let mut pending = accepted.as_os_str().to_owned();
    pending.push(".new");
    let new = std::fs::read_to_string(&pending)
        .map(body)
        .unwrap_or_else(|_| serde_json::to_string_pretty(evidence).unwrap_or_default());
    crate::timeline::snapshot_mismatch(file, old, new);
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
