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

/// Reads what the instance of `client`'s directory holds: terminals (`GET /pty`), language
/// servers (`GET /lsp`), MCP clients (`GET /mcp`) and pending asks. Anything unreadable counts
/// as held.
pub(crate) async fn instance_state(client: &crate::client::Client) -> InstanceState {
    let mut held = Vec::new();
    for (path, name) in [("/pty", "pty"), ("/lsp", "lsp"), ("/mcp", "mcp")] {
        match client.get_value(path).await {
            Ok(value) if is_empty(&value) => {}
            _ => held.push(name),
        }
    }
    let asks = match (client.permissions().await, client.questions().await) {
        (Ok(p), Ok(q)) => p.is_empty() && q.is_empty(),
        _ => false,
    };
    if !asks {
        held.push("pending ask");
    }
    InstanceState { held }
}

/// Rejects the asks still pending for `sessions` (deleted ones): OpenCode keeps an ask of a
/// deleted session pending, and a pending ask is what only a dispose clears otherwise. An ask
/// of another session is left alone; a failed reply leaves the ask to [`instance_state`].
pub(crate) async fn reject_asks_of(
    client: &crate::client::Client,
    sessions: &std::collections::HashSet<String>,
) {
    use crate::client::PermissionReply;
    if let Ok(asks) = client.permissions().await {
        for ask in asks.iter().filter(|a| sessions.contains(&a.session_id)) {
            let _ = client
                .reply_permission(&ask.session_id, &ask.id, PermissionReply::Reject, None)
                .await;
        }
    }
    if let Ok(questions) = client.questions().await {
        for question in questions
            .iter()
            .filter(|q| sessions.contains(&q.session_id))
        {
            let _ = client.reject_question(&question.id).await;
        }
    }
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
