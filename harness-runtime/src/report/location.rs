//! Where the report goes (`LIVE_REPORT`, else `<target dir>/live-report`) and which run a
//! record belongs to.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::settings::{self, ReportPlace};

/// The report folder of this process; `None` when `LIVE_REPORT=off` (or when it is invalid,
/// which the runner reports before any trial).
pub(crate) fn report_dir() -> Option<PathBuf> {
    match settings::report_place() {
        Ok(Some(ReportPlace::Off)) | Err(_) => None,
        Ok(Some(ReportPlace::Dir(dir))) => Some(dir),
        Ok(None) => Some(target_dir()?.join("live-report")),
    }
}

/// Cargo's target directory as the test binary sees it: `CARGO_TARGET_DIR` when set, else the
/// folder above `<profile>/deps/` the binary runs from.
fn target_dir() -> Option<PathBuf> {
    if let Some(dir) = settings::cargo_target_dir() {
        return Some(dir);
    }
    let exe = std::env::current_exe().ok()?;
    from_binary(&exe)
}

/// `target/debug/deps/live-0123` → `target`; `target/<triple>/debug/deps/x` → `target/<triple>`.
fn from_binary(exe: &Path) -> Option<PathBuf> {
    let deps = exe.parent()?;
    if deps.file_name()? != "deps" {
        // A binary run from elsewhere (copied, `cargo run`'s `target/debug/x`).
        return Some(exe.parent()?.parent()?.to_path_buf());
    }
    Some(deps.parent()?.parent()?.to_path_buf())
}

/// The run this process's records belong to: nextest's run id (one per `cargo nextest run`,
/// shared by its processes), else one made by this process.
pub(crate) fn run_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        if let Some(id) = settings::nextest_run_id() {
            return sanitize(&id);
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        format!("{}-{}", now.as_millis(), std::process::id())
    })
}

/// Letters, digits, `-`, `_` and `.` only: the name is a folder's.
pub(crate) fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_dir_is_above_the_profile_of_the_binary() {
        let from = |p: &str| from_binary(Path::new(p)).unwrap();
        assert_eq!(
            from("/w/target/debug/deps/live-0a1b"),
            Path::new("/w/target")
        );
        assert_eq!(
            from("/w/target/x86_64-unknown-linux-gnu/release/deps/live-0a1b"),
            Path::new("/w/target/x86_64-unknown-linux-gnu")
        );
        assert_eq!(from("/w/target/debug/live"), Path::new("/w/target"));
    }

    #[test]
    fn run_ids_are_folder_names() {
        assert_eq!(sanitize("a1/b:c.d-e_f"), "a1_b_c.d-e_f");
    }
}
