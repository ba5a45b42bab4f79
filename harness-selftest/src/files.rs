//! What a run left on disk, read back by the tests.

use std::path::{Path, PathBuf};

/// Every regular file below `dir`, recursively (unreadable folders are skipped: the caller
/// asserts on what it finds, and a folder it cannot read holds nothing it wrote).
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => stack.push(path),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out
}
