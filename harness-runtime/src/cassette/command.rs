//! How a cassette is named to the user: its path, and the command that records it again.

use std::path::Path;

/// `path` as messages show it: relative to the working directory when below it (cargo runs
/// tests in the crate's manifest dir, so this reads `cassettes/<stem>.json`), else
/// `$LIVE_CASSETTE_DIR/<file>`: the only way a cassette lives elsewhere, and a folder there is
/// the user's, often a temp dir (volatile).
pub(crate) fn display_path(path: &Path) -> String {
    match std::env::current_dir() {
        Ok(cwd) => shown(path, &cwd),
        Err(_) => path.display().to_string(),
    }
}

/// `path` relative to `base` when below it, else `$LIVE_CASSETTE_DIR/<file>`.
pub(crate) fn shown(path: &Path, base: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(relative) => relative.display().to_string(),
        Err(_) => {
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("${}/{file}", crate::settings::CASSETTE_DIR)
        }
    }
}

/// The command that records the cassette of `scenario` (`<topic>::<fn>`) again, for the
/// running test binary.
pub(crate) fn rerecord_command(scenario: &str) -> String {
    format!(
        "{}=record cargo test --test {} -- {scenario} --exact",
        crate::settings::CASSETTE,
        crate::test_target::running()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_names_the_running_target_and_the_scenario() {
        assert_eq!(
            rerecord_command("probes::basic_turn"),
            "LIVE_CASSETTE=record cargo test --test harness_runtime -- probes::basic_turn --exact"
        );
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
            "$LIVE_CASSETTE_DIR/x.json"
        );
    }
}
