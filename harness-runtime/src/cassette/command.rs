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
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| test_target(&stem).to_owned())
        .unwrap_or_else(|| "<target>".to_owned());
    format!(
        "{}=record cargo test --test {target} -- {scenario} --exact",
        crate::settings::CASSETTE
    )
}

/// A test binary's target name: its file stem without cargo's `-<16 hex digits>` suffix.
fn test_target(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash))
            if !name.is_empty()
                && hash.len() == 16
                && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
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
        assert_eq!(test_target("my-suite-0123456789ABCDEF"), "my-suite");
        assert_eq!(test_target("my-suite"), "my-suite");
        assert_eq!(test_target("live-0123"), "live-0123");
        assert_eq!(test_target("-0123456789abcdef"), "-0123456789abcdef");
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
            "$LIVE_CASSETTE_DIR/x.json"
        );
    }
}
