//! How a cassette is named to the user: its path, and the command that records it again.

use std::path::Path;

/// `path` relative to the working directory when below it (cargo runs tests in the crate's
/// manifest dir, so this reads `cassettes/<stem>.json`); below a `LIVE_CASSETTE_DIR` elsewhere,
/// `$LIVE_CASSETTE_DIR/<stem>.json`, as the progress line shows it (such a folder is often a
/// temp dir: volatile); else as it is.
pub(crate) fn display_path(path: &Path) -> String {
    let cwd = std::env::current_dir().ok();
    let dir = crate::settings::cassette_dir().ok().flatten();
    display_path_in(path, cwd.as_deref(), dir.as_deref())
}

/// [`display_path`] with the working directory and `LIVE_CASSETTE_DIR` given.
fn display_path_in(path: &Path, cwd: Option<&Path>, cassette_dir: Option<&Path>) -> String {
    if let Some(relative) = cwd.and_then(|cwd| path.strip_prefix(cwd).ok()) {
        return relative.display().to_string();
    }
    if let Some(rest) = cassette_dir.and_then(|dir| path.strip_prefix(dir).ok()) {
        return format!("${}/{}", crate::settings::CASSETTE_DIR, rest.display());
    }
    path.display().to_string()
}

/// The command that records the cassette of `scenario` (`<topic>::<fn>`) again, for the
/// running test binary.
pub(crate) fn rerecord_command(scenario: &str) -> String {
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| test_target(&stem).to_owned())
        .unwrap_or_else(|| "<target>".to_owned());
    format!("LIVE_CASSETTE=record cargo test --test {target} -- {scenario} --exact")
}

/// A test binary's target name: its file stem without cargo's `-<16 hex digits>` suffix.
fn test_target(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()) => {
            name
        }
        _ => stem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_the_stem_without_cargos_hash() {
        assert_eq!(test_target("live-0123456789abcdef"), "live");
        assert_eq!(test_target("my-suite-0123456789abcdef"), "my-suite");
        assert_eq!(test_target("my-suite"), "my-suite");
        assert!(rerecord_command("probes::basic_turn").starts_with(
            "LIVE_CASSETTE=record cargo test --test harness_runtime -- probes::basic_turn --exact"
        ));
    }

    #[test]
    fn paths_below_the_working_directory_are_shown_relative() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            display_path(&cwd.join("cassettes/a__b.json")),
            "cassettes/a__b.json"
        );
        assert_eq!(
            display_path(Path::new("/elsewhere/x.json")),
            "/elsewhere/x.json"
        );
    }

    #[test]
    fn a_cassette_folder_elsewhere_is_shown_by_its_variable() {
        let (cwd, dir) = (Path::new("/crate"), Path::new("/tmp/.tmpAbC"));
        let shown = |path: &str| display_path_in(Path::new(path), Some(cwd), Some(dir));
        assert_eq!(
            shown("/tmp/.tmpAbC/a__b.json"),
            "$LIVE_CASSETTE_DIR/a__b.json"
        );
        assert_eq!(
            shown("/tmp/.tmpAbC/a__b.json.pending"),
            "$LIVE_CASSETTE_DIR/a__b.json.pending"
        );
        assert_eq!(shown("/crate/cassettes/a__b.json"), "cassettes/a__b.json");
        assert_eq!(shown("/elsewhere/x.json"), "/elsewhere/x.json");
        assert_eq!(
            display_path_in(Path::new("/tmp/.tmpAbC/a.json"), Some(cwd), None),
            "/tmp/.tmpAbC/a.json"
        );
    }
}
