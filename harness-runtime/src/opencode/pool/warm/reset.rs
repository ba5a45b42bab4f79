//! Resetting a seat for its next lessee: the work tree back to what the pool made, and the
//! instance's own state checked (what only a dispose clears).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The directories the pool made in a seat's workspace: the project's git dir (its project id)
/// and the harness's config directory. Everything else is the lessee's.
const KEPT: [&str; 2] = [".git", ".opencode"];
/// What OpenCode itself writes there when it boots an instance: the same for every lessee.
const WRITTEN_AT_BOOT: [&str; 1] = [".opencode/.gitignore"];

/// What [`KEPT`] held when the seat was made: every entry (a directory: `None`) and its content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Baseline(BTreeMap<PathBuf, Option<Vec<u8>>>);

impl Baseline {
    /// Reads the seat's [`KEPT`] directories as they are now.
    pub(crate) fn read(workspace: &Path) -> std::io::Result<Self> {
        let mut entries = BTreeMap::new();
        for kept in KEPT {
            walk(workspace, Path::new(kept), &mut entries)?;
        }
        Ok(Baseline(entries))
    }

    /// Removes everything of `workspace` but [`KEPT`], and says whether those are as they
    /// were made (`false`: the lessee changed the project's git state or the config
    /// directory, which the instance read at its boot: the seat is not reused).
    pub(crate) fn scrub(&self, workspace: &Path) -> std::io::Result<bool> {
        for entry in std::fs::read_dir(workspace)? {
            let entry = entry?;
            if KEPT.iter().any(|k| entry.file_name() == *k) {
                continue;
            }
            let path = entry.path();
            // Not followed: a symlink is removed, never what it points to.
            if entry.file_type()?.is_dir() {
                make_writable(&path);
                std::fs::remove_dir_all(&path)?;
            } else {
                std::fs::remove_file(&path)?;
            }
        }
        Ok(Self::read(workspace).is_ok_and(|now| now == *self))
    }
}

/// A lessee may have made directories read-only: removal needs them writable.
fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            make_writable(&entry.path());
        }
    }
}

fn walk(
    workspace: &Path,
    relative: &Path,
    entries: &mut BTreeMap<PathBuf, Option<Vec<u8>>>,
) -> std::io::Result<()> {
    if WRITTEN_AT_BOOT.iter().any(|w| relative == Path::new(w)) {
        return Ok(());
    }
    let path = workspace.join(relative);
    let meta = std::fs::symlink_metadata(&path)?;
    if meta.is_dir() {
        entries.insert(relative.to_path_buf(), None);
        for entry in std::fs::read_dir(&path)? {
            walk(workspace, &relative.join(entry?.file_name()), entries)?;
        }
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path)?;
        entries.insert(
            relative.to_path_buf(),
            Some(target.into_os_string().into_encoded_bytes()),
        );
    } else {
        entries.insert(relative.to_path_buf(), Some(std::fs::read(&path)?));
    }
    Ok(())
}

/// What the instance of a seat holds beyond its sessions, read after they were deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct InstanceState {
    /// What only a dispose clears, each named (`pty`, `lsp`, `mcp`, `pending ask`); empty: the
    /// instance is as a fresh one of the same config.
    pub(crate) held: Vec<&'static str>,
}

/// Reads what the instance of `client`'s directory holds once the asks still pending for
/// `deleted` sessions are rejected: terminals (`GET /pty`), language servers (`GET /lsp`), MCP
/// clients (`GET /mcp`) and pending asks. OpenCode keeps an ask of a deleted session pending,
/// and a pending ask is what only a dispose clears otherwise; an ask of another session, or one
/// whose rejection failed, counts as held. Anything unreadable counts as held. The asks are
/// read once: each request costs the server more than the rest of the check.
pub(crate) async fn instance_state(
    client: &crate::client::Client,
    deleted: &std::collections::HashSet<String>,
) -> InstanceState {
    let mut held = Vec::new();
    for (path, name) in [("/pty", "pty"), ("/lsp", "lsp"), ("/mcp", "mcp")] {
        match client.get_value(path).await {
            Ok(value) if is_empty(&value) => {}
            _ => held.push(name),
        }
    }
    if !reject_asks_of(client, deleted).await {
        held.push("pending ask");
    }
    InstanceState { held }
}

/// Rejects the asks pending for `deleted` sessions; `true` when none is left pending (an ask of
/// another session, a failed read or a failed reply leave one).
async fn reject_asks_of(
    client: &crate::client::Client,
    deleted: &std::collections::HashSet<String>,
) -> bool {
    use crate::client::PermissionReply;
    let (Ok(asks), Ok(questions)) = (client.permissions().await, client.questions().await) else {
        return false;
    };
    let mut none_left = true;
    for ask in &asks {
        none_left &= deleted.contains(&ask.session_id)
            && client
                .reply_permission(&ask.session_id, &ask.id, PermissionReply::Reject, None)
                .await
                .is_ok();
    }
    for question in &questions {
        none_left &= deleted.contains(&question.session_id)
            && client.reject_question(&question.id).await.is_ok();
    }
    none_left
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scrub_keeps_what_the_pool_made_and_notices_a_changed_git_dir() {
        let temp = tempfile::tempdir().unwrap();
        let ws = temp.path();
        crate::opencode::project::make_own_project(ws).unwrap();
        crate::opencode::project::write_project_config(ws, &serde_json::json!({})).unwrap();
        let baseline = Baseline::read(ws).unwrap();
        std::fs::write(ws.join("mine.txt"), "x").unwrap();
        std::fs::create_dir_all(ws.join("src/deep")).unwrap();
        std::fs::write(ws.join("src/deep/a.rs"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", ws.join("link")).unwrap();
        // What OpenCode writes at its boot is not the lessee's.
        std::fs::write(ws.join(".opencode/.gitignore"), "node_modules\n").unwrap();
        assert!(baseline.scrub(ws).unwrap());
        let mut left: Vec<_> = std::fs::read_dir(ws)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, [".git", ".opencode"]);
        assert!(ws.join(".opencode/.gitignore").is_file());
        assert!(Path::new("/etc").exists());
        // A branch the lessee made, or a file in the config directory: not reusable.
        std::fs::write(ws.join(".git/refs/heads/topic"), "0").unwrap();
        assert!(!baseline.scrub(ws).unwrap());
        std::fs::remove_file(ws.join(".git/refs/heads/topic")).unwrap();
        assert!(baseline.scrub(ws).unwrap());
        std::fs::create_dir_all(ws.join(".opencode/agents")).unwrap();
        assert!(!baseline.scrub(ws).unwrap());
    }
}
