//! A directory the processes of one run share (the cross-process pool's), guarded by an owner
//! lock: `flock` on its `owner.lock`, held by its owner for the owner's whole life, so the
//! kernel frees it when the owner dies, even by SIGKILL. What the owner's reaper does with it
//! then: everything in it but what its `kept` file names (a failure's evidence) is removed.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The lock file: locked by the directory's owner while it lives.
pub(crate) const LOCK: &str = "owner.lock";
/// Paths in the directory to keep after its owner, one a line (a failure's evidence).
pub(crate) const KEPT: &str = "kept";
/// The reaper line (`clean-dir <path>`) that asks it to clean the directory after the sweep.
pub(crate) const CLEAN_DIR: &str = "clean-dir ";
/// How long the reaper waits for the lock before leaving the directory alone (whoever holds it
/// is a new owner, who then owns what is in it).
const LOCK_CEILING: Duration = Duration::from_secs(5);

/// Takes the directory's lock, without waiting: `None` while someone holds it. The lock is the
/// returned file's (and any descriptor duplicated from it, a child's stdin included): it is
/// held until the last of them is closed. Creates the directory when missing.
pub(crate) fn try_lock(dir: &Path) -> io::Result<Option<File>> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(LOCK);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)?;
    // nix's `Flock` unlocks on drop, which would take the lock from the child that inherits
    // the descriptor; the plain call leaves the lock to the open file.
    #[allow(deprecated)]
    match nix::fcntl::flock(
        file.as_raw_fd(),
        nix::fcntl::FlockArg::LockExclusiveNonblock,
    ) {
        Ok(()) => {}
        Err(nix::errno::Errno::EWOULDBLOCK) => return Ok(None),
        Err(e) => return Err(io::Error::from(e)),
    }
    // A cleaner may have removed the file between our open and our lock: a lock on a file no
    // longer at the path guards nothing.
    let same =
        std::fs::metadata(&path).is_ok_and(|m| m.ino() == file.metadata().map_or(0, |f| f.ino()));
    Ok(same.then_some(file))
}

/// The reaper's cleaning of `dir` after its owner died: waits for the lock (a bounded while),
/// removes every entry but the lock and what `kept` names; when nothing is kept, the
/// directory itself. Under `LIVE_KEEP` nothing is removed.
pub(crate) fn clean_after_owner(dir: &Path) {
    if crate::settings::keep_roots() || !dir.exists() {
        return;
    }
    let deadline = Instant::now() + crate::settings::scaled(LOCK_CEILING);
    let lock = loop {
        match try_lock(dir) {
            Ok(Some(lock)) => break lock,
            // Another process holds the lock and `flock` has no wait with a ceiling: a bounded poll.
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => return,
        }
    };
    let kept = kept(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if name == LOCK || name == KEPT || kept.contains(&path) {
            continue;
        }
        let _ = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
    }
    if kept.is_empty() {
        let _ = std::fs::remove_file(dir.join(KEPT));
        let _ = std::fs::remove_file(dir.join(LOCK));
        let _ = std::fs::remove_dir(dir);
    }
    drop(lock);
}

/// Notes `path` (an entry of `dir`) as kept after the owner.
pub(crate) fn keep(dir: &Path, path: &Path) {
    use std::io::Write;
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(KEPT))
        .and_then(|mut file| writeln!(file, "{}", path.display()));
}

fn kept(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(dir.join(KEPT))
        .unwrap_or_default()
        .lines()
        .map(PathBuf::from)
        .collect()
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_lock_is_exclusive_and_cleaning_spares_what_is_kept() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("live-pool-test");
        let lock = try_lock(&dir).unwrap().expect("a free lock");
        assert!(try_lock(&dir).unwrap().is_none(), "held by the first");
        std::fs::create_dir_all(dir.join("gone/deep")).unwrap();
        std::fs::create_dir_all(dir.join("evidence")).unwrap();
        std::fs::write(dir.join("pool.sock"), "").unwrap();
        keep(&dir, &dir.join("evidence"));
        drop(lock);
        clean_after_owner(&dir);
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["evidence", "kept", "owner.lock"]);
        std::fs::remove_file(dir.join(KEPT)).unwrap();
        std::fs::remove_dir(dir.join("evidence")).unwrap();
        clean_after_owner(&dir);
        assert!(!dir.exists());
    }
}
