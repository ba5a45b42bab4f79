//! A seat: a workspace of the pool's on one shared server, its instance booted with one config,
//! and the stable model port that config names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Baseline, ModelRelay, SeatConfig};
use crate::opencode::root::AgentRoot;

/// The name seats' roots carry (`live-seat-<pid>-<nonce>`).
const SEAT_NAME: &str = "seat";
/// Files at a workspace's top that OpenCode may read when it boots the directory's instance
/// (config, instructions, skills): a lessee that left one may have booted the instance with it,
/// so the next lessee gets the instance disposed and booted again.
const BOOT_INPUTS: [&str; 7] = [
    "opencode.json",
    "opencode.jsonc",
    "AGENTS.md",
    "CLAUDE.md",
    "CONTEXT.md",
    ".claude",
    ".agents",
];

/// What OpenCode 1.18.33 writes into a config directory when it boots an instance. A seat has
/// it from the start, so a fresh seat and a warm one look the same before the first request.
const BOOT_GITIGNORE: (&str, &str) = (
    ".gitignore",
    "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore",
);

/// One seat.
#[derive(Debug)]
pub(crate) struct Seat {
    pub(crate) root: AgentRoot,
    pub(crate) key: String,
    pub(crate) relay: ModelRelay,
    baseline: Baseline,
    outside: Outside,
}

/// How a released seat can be handed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reset {
    /// As made, its instance untouched by anything but sessions (deleted).
    Warm,
    /// As made, but its instance must be disposed first (and booted again).
    Disposed,
    /// Not reusable: its git dir or config directory changed.
    Gone,
}

impl Seat {
    /// A new seat in `pool_dir` for `config` on the server rooted at `server_root` running
    /// `program`: its workspace is a project of its own with the config naming the seat's relay
    /// and the shell confining its bash commands to the seat's root and relay (both stable for
    /// the seat's life, as OpenCode caches them with the config).
    pub(crate) fn create(
        pool_dir: &Path,
        config: &SeatConfig,
        (server_root, program): (&Path, &Path),
    ) -> std::io::Result<Seat> {
        let root = AgentRoot::create_in(pool_dir, SEAT_NAME)?;
        let made = (|| {
            let relay = ModelRelay::start()?;
            let written = crate::opencode::pool::shell::confine_config(
                server_root,
                program,
                &root,
                config.for_port(relay.port()),
            )?;
            crate::opencode::project::write_project_config(&root.workspace, &written)?;
            let (name, content) = BOOT_GITIGNORE;
            std::fs::write(root.workspace.join(".opencode").join(name), content)?;
            let baseline = Baseline::read(&root.workspace)?;
            let outside = Outside::read(&root.root)?;
            Ok(Seat {
                root: root.clone(),
                key: config.key.clone(),
                relay,
                baseline,
                outside,
            })
        })();
        if made.is_err() {
            let _ = std::fs::remove_dir_all(&root.root);
        }
        made
    }

    /// The files at the workspace's top OpenCode may read at boot that the lessee left.
    pub(crate) fn boot_inputs_left(&self) -> Vec<&'static str> {
        BOOT_INPUTS
            .into_iter()
            .filter(|name| std::fs::symlink_metadata(self.root.workspace.join(name)).is_ok())
            .collect()
    }

    /// Removes everything the lessee left in the workspace and the rest of the seat's root;
    /// says how the seat can be reused.
    pub(crate) fn reset(&self) -> Reset {
        let ws = &self.root.workspace;
        let booted_with_more = !self.boot_inputs_left().is_empty();
        if !self.outside.restore(&self.root.root).unwrap_or(false) {
            return Reset::Gone;
        }
        match self.baseline.scrub(ws) {
            Ok(true) if booted_with_more => Reset::Disposed,
            Ok(true) => Reset::Warm,
            _ => Reset::Gone,
        }
    }
}

/// The seat's root outside its workspace (`home`, `tmp`, the XDG directories, …) as the pool
/// made it: every entry (a directory: `None`) and its content. The seat's bash commands may
/// write there (their `HOME`, `TMPDIR` and XDG directories are the seat's, as a scenario's own
/// root's are on a server of its own), and the next lessee must not find what they left.
#[derive(Debug)]
struct Outside(BTreeMap<PathBuf, Option<Vec<u8>>>);

/// The one entry of a seat's root the workspace's own reset covers.
const WORKSPACE: &str = "workspace";

impl Outside {
    fn read(root: &Path) -> std::io::Result<Self> {
        let mut entries = BTreeMap::new();
        for entry in std::fs::read_dir(root)? {
            let name = PathBuf::from(entry?.file_name());
            if name != Path::new(WORKSPACE) {
                record(root, &name, &mut entries)?;
            }
        }
        Ok(Outside(entries))
    }

    /// Removes what was not there when the seat was made; `true` when the rest is as made.
    fn restore(&self, root: &Path) -> std::io::Result<bool> {
        let mut now = BTreeMap::new();
        for entry in std::fs::read_dir(root)? {
            let name = PathBuf::from(entry?.file_name());
            if name != Path::new(WORKSPACE) {
                record(root, &name, &mut now)?;
            }
        }
        // Sorted, so a new directory comes before what it holds: removed whole, once.
        let mut removed: Vec<&PathBuf> = Vec::new();
        for path in now.keys().filter(|p| !self.0.contains_key(*p)) {
            if removed.iter().any(|r| path.starts_with(r)) {
                continue;
            }
            let full = root.join(path);
            if std::fs::symlink_metadata(&full)?.is_dir() {
                std::fs::remove_dir_all(&full)?;
            } else {
                std::fs::remove_file(&full)?;
            }
            removed.push(path);
        }
        Ok(Self::read(root)?.0 == self.0)
    }
}

/// Records `relative` (beneath `root`) and, for a directory, everything in it; a symlink is
/// recorded as its target, never followed.
fn record(
    root: &Path,
    relative: &Path,
    entries: &mut BTreeMap<PathBuf, Option<Vec<u8>>>,
) -> std::io::Result<()> {
    let path = root.join(relative);
    let meta = std::fs::symlink_metadata(&path)?;
    if meta.is_dir() {
        entries.insert(relative.to_path_buf(), None);
        for entry in std::fs::read_dir(&path)? {
            record(root, &relative.join(entry?.file_name()), entries)?;
        }
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path)?.into_os_string();
        entries.insert(relative.to_path_buf(), Some(target.into_encoded_bytes()));
    } else {
        entries.insert(relative.to_path_buf(), Some(std::fs::read(&path)?));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a lessee's bash commands leave in the seat's home, tmp, XDG directories or root is
    /// removed; a file the pool made there that changed makes the seat not reusable.
    #[test]
    fn the_root_outside_the_workspace_is_put_back_as_made() {
        let temp = tempfile::tempdir().unwrap();
        let root = AgentRoot::create_in(temp.path(), "unit::seat").unwrap();
        let outside = Outside::read(&root.root).unwrap();
        std::fs::write(root.home.join(".bash_history"), "secret").unwrap();
        std::fs::create_dir_all(root.tmp.join("a/b")).unwrap();
        std::fs::write(root.tmp.join("a/b/c"), "x").unwrap();
        std::fs::write(root.xdg_config.join("git-config"), "x").unwrap();
        std::fs::write(root.root.join("left-at-the-top"), "x").unwrap();
        std::fs::write(root.workspace.join("work.txt"), "the workspace's reset's").unwrap();
        assert!(outside.restore(&root.root).unwrap());
        assert_eq!(std::fs::read_dir(&root.home).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(&root.tmp).unwrap().count(), 0);
        assert!(!root.xdg_config.join("git-config").exists());
        assert!(!root.root.join("left-at-the-top").exists());
        assert!(root.workspace.join("work.txt").exists());
        let seed = root.xdg_config.join("opencode").join("package.json");
        std::fs::write(&seed, "{}").unwrap();
        assert!(!outside.restore(&root.root).unwrap());
    }
}
