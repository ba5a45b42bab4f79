//! A seat: a workspace of the pool's on one shared server, its instance booted with one config,
//! and the stable model port that config names.

use std::path::Path;

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
            let written = crate::opencode::workspace_shell::confine_config(
                server_root,
                program,
                &root,
                config.for_port(relay.port()),
            )?;
            crate::opencode::project::write_project_config(&root.workspace, &written)?;
            let (name, content) = BOOT_GITIGNORE;
            std::fs::write(root.workspace.join(".opencode").join(name), content)?;
            let baseline = Baseline::read(&root.workspace)?;
            Ok(Seat {
                root: root.clone(),
                key: config.key.clone(),
                relay,
                baseline,
            })
        })();
        if made.is_err() {
            let _ = std::fs::remove_dir_all(&root.root);
        }
        made
    }

    /// Removes everything the lessee left in the workspace; says how the seat can be reused.
    pub(crate) fn reset(&self) -> Reset {
        let ws = &self.root.workspace;
        let booted_with_more = BOOT_INPUTS
            .iter()
            .any(|name| std::fs::symlink_metadata(ws.join(name)).is_ok());
        match self.baseline.scrub(ws) {
            Ok(true) if booted_with_more => Reset::Disposed,
            Ok(true) => Reset::Warm,
            _ => Reset::Gone,
        }
    }
}
