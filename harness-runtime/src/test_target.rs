//! The name cargo knows the running test binary by, for the commands messages suggest
//! (`cargo test --test <target>`, `cargo insta test --test <target>`).

/// The running test binary's target name: its file stem without cargo's `-<16 hex digits>`
/// suffix (`live-0123456789abcdef` → `live`); `<target>` when it cannot be read.
pub(crate) fn running() -> String {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| target(&stem).to_owned())
        .unwrap_or_else(|| "<target>".to_owned())
}

/// A test binary's target name from its file stem.
fn target(stem: &str) -> &str {
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
        assert_eq!(target("live-0123456789abcdef"), "live");
        assert_eq!(target("my-suite-0123456789ABCDEF"), "my-suite");
        assert_eq!(target("my-suite"), "my-suite");
        assert_eq!(target("live-0123"), "live-0123");
        assert_eq!(target("-0123456789abcdef"), "-0123456789abcdef");
        assert_eq!(running(), "harness_runtime");
    }
}
