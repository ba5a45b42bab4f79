//! The accepted snapshot file, checked before insta reads it.
//!
//! insta takes a file it cannot parse for "no snapshot yet": it warns on stderr and the assertion
//! then reads as an ordinary mismatch, which hides that the accepted evidence itself is broken
//! (a bad merge, a truncated write). Every file insta writes starts with a `---` header that
//! closes with `---`; anything else is reported as corrupt, naming the file and the problem.

use std::path::Path;

/// Why the snapshot at `path` cannot be the accepted evidence, or `None` when it is fine or
/// absent (a first run records it).
pub(crate) fn corruption(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Some("it is not valid UTF-8".into());
    };
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Some("it does not start with insta's `---` header".into());
    }
    if !lines.any(|line| line.trim_end() == "---") {
        return Some("its header is cut short: no closing `---`".into());
    }
    // insta's own parser decides the rest; its error quotes the full path, so it is not shown.
    insta::Snapshot::from_file(path)
        .err()
        .map(|_| "its header is not the YAML insta writes".into())
}

#[cfg(test)]
mod tests {
    use super::corruption;

    fn check(bytes: &[u8]) -> Option<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("topic__name.snap");
        std::fs::write(&path, bytes).unwrap();
        corruption(&path)
    }

    #[test]
    fn an_absent_or_well_formed_snapshot_is_fine() {
        assert_eq!(
            corruption(std::path::Path::new("/nonexistent/x.snap")),
            None
        );
        assert_eq!(
            check(b"---\nsource: x.rs\nexpression: value\n---\n- answer: 42\n"),
            None
        );
    }

    #[test]
    fn each_corruption_is_named() {
        let reason = |bytes: &[u8]| check(bytes).unwrap();
        assert!(reason(&[0xff, 0xfe, b'\n']).contains("not valid UTF-8"));
        assert!(reason(b"garbage {{{").contains("does not start with"));
        assert!(reason(b"").contains("does not start with"));
        assert!(reason(b"---\nsource: x.rs\nexpr").contains("cut short"));
        assert!(reason(b"---\n: : [\n---\nvalue\n").contains("not the YAML"));
    }
}
