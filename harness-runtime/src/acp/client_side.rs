//! The client side of ACP that the agent calls back into: its session updates (kept in arrival
//! order for the turns to read), its permission requests (answered by the session's ask policy,
//! and remembered as interactions), and its file reads and writes (served inside the scenario's
//! root only).

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use agent_client_protocol::v1::schema::{
    PermissionOptionKind, ReadTextFileRequest, ReadTextFileResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SelectedPermissionOutcome,
    SessionNotification, WriteTextFileRequest, WriteTextFileResponse,
};
use serde_json::Value;
use tokio::sync::Notify;

use crate::client::PermissionPolicy;

/// One `session/update`, as JSON (agents add kinds faster than a typed enum follows).
#[derive(Clone, Debug)]
pub(crate) struct Update {
    pub(crate) session: String,
    pub(crate) update: Value,
}

/// One `session/request_permission` and what the harness answered.
#[derive(Clone, Debug)]
pub(crate) struct PermissionAsk {
    pub(crate) session: String,
    /// The tool call it asks about, as the agent described it.
    pub(crate) tool_call: Value,
    /// `once`, `always`, `reject`, or `None` while left pending.
    pub(crate) reply: Option<&'static str>,
}

/// What the agent told the harness, and how the harness answers it.
pub(crate) struct ClientSide {
    /// Where the agent may read and write files through the client.
    root: PathBuf,
    updates: Mutex<Vec<Update>>,
    /// `session/update` lines read from the agent's stdout so far: ahead of `updates` while the
    /// SDK dispatches them, and the order a turn is cut by (see [`updates_read`](Self::updates_read)).
    read: std::sync::atomic::AtomicUsize,
    asks: Mutex<Vec<PermissionAsk>>,
    policies: Mutex<HashMap<String, PermissionPolicy>>,
    /// Requests left pending: their responders are kept, not dropped (which would answer).
    held: Mutex<Vec<Box<dyn Any + Send>>>,
    /// Notified on every update and ask.
    pub(crate) changed: Notify,
}

impl ClientSide {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            updates: Mutex::default(),
            read: Default::default(),
            asks: Mutex::default(),
            policies: Mutex::default(),
            held: Mutex::default(),
            changed: Notify::new(),
        }
    }

    /// The ask policy of `session`'s permission requests from now on.
    pub(crate) fn set_policy(&self, session: &str, policy: PermissionPolicy) {
        lock(&self.policies).insert(session.to_string(), policy);
    }

    /// Counts `line` (read from the agent, not yet dispatched) when it is a `session/update`.
    pub(crate) fn read_line(&self, line: &str) {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            method: Option<&'a str>,
        }
        let head = serde_json::from_str::<Head<'_>>(line);
        if head.is_ok_and(|head| head.method == Some("session/update")) {
            self.read.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// How many `session/update` lines were read from the agent so far. A turn is cut here,
    /// not at what was dispatched: the SDK hands an answer to its waiter before it dispatches
    /// the notifications read after it, so a count of dispatched updates races with them.
    pub(crate) fn updates_read(&self) -> usize {
        self.read.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits (up to `ceiling`) until the first `count` updates read were dispatched too.
    pub(crate) async fn dispatched(&self, count: usize, ceiling: std::time::Duration) {
        let caught_up = async {
            loop {
                let changed = self.changed.notified();
                if lock(&self.updates).len() >= count {
                    return;
                }
                changed.await;
            }
        };
        let _ = tokio::time::timeout(ceiling, caught_up).await;
    }

    /// How many permission requests arrived so far.
    pub(crate) fn ask_count(&self) -> usize {
        lock(&self.asks).len()
    }

    /// `session`'s updates from index `from` on.
    pub(crate) fn updates_since(&self, session: &str, from: usize) -> Vec<Value> {
        lock(&self.updates)
            .iter()
            .skip(from)
            .filter(|u| u.session == session)
            .map(|u| u.update.clone())
            .collect()
    }

    /// `session`'s permission requests from index `from` on.
    pub(crate) fn asks_since(&self, session: &str, from: usize) -> Vec<PermissionAsk> {
        lock(&self.asks)
            .iter()
            .skip(from)
            .filter(|a| a.session == session)
            .cloned()
            .collect()
    }

    /// What the agent was last seen doing: for a diagnostic when it stops answering.
    pub(crate) fn last_activity(&self) -> String {
        let pending = lock(&self.asks)
            .iter()
            .filter(|a| a.reply.is_none())
            .map(|a| title(&a.tool_call))
            .collect::<Vec<_>>();
        if !pending.is_empty() {
            return format!(
                "permission request(s) left pending by the policy: {}",
                pending.join(", ")
            );
        }
        match lock(&self.updates).last() {
            Some(u) => format!(
                "its last update was `{}`",
                u.update["sessionUpdate"].as_str().unwrap_or("?")
            ),
            None => "no update came".into(),
        }
    }

    pub(crate) fn on_update(&self, notification: SessionNotification) {
        let update = serde_json::to_value(&notification.update).unwrap_or(Value::Null);
        lock(&self.updates).push(Update {
            session: notification.session_id.to_string(),
            update,
        });
        self.changed.notify_waiters();
    }

    /// The answer to a permission request under its session's policy, remembered; `None`:
    /// left pending (keep the responder with [`hold`](Self::hold)).
    pub(crate) fn on_permission(
        &self,
        request: &RequestPermissionRequest,
    ) -> Option<RequestPermissionResponse> {
        let session = request.session_id.to_string();
        let policy = lock(&self.policies)
            .get(&session)
            .copied()
            .unwrap_or_default();
        let wanted: &[(PermissionOptionKind, &'static str)] = match policy {
            PermissionPolicy::Once => &[(PermissionOptionKind::AllowOnce, "once")],
            PermissionPolicy::Always => &[
                (PermissionOptionKind::AllowAlways, "always"),
                (PermissionOptionKind::AllowOnce, "once"),
            ],
            PermissionPolicy::Reject => &[
                (PermissionOptionKind::RejectOnce, "reject"),
                (PermissionOptionKind::RejectAlways, "reject"),
            ],
            PermissionPolicy::LeavePending => &[],
        };
        // By kind, never by position or name: agents order and word their options freely.
        let chosen = wanted.iter().find_map(|(kind, reply)| {
            let option = request.options.iter().find(|o| o.kind == *kind)?;
            Some((option.option_id.clone(), *reply))
        });
        lock(&self.asks).push(PermissionAsk {
            session,
            tool_call: serde_json::to_value(&request.tool_call).unwrap_or(Value::Null),
            reply: chosen.as_ref().map(|(_, reply)| *reply),
        });
        self.changed.notify_waiters();
        let (id, _) = chosen?;
        Some(RequestPermissionResponse::new(
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
        ))
    }

    /// Keeps a pending request's responder until the agent stops.
    pub(crate) fn hold(&self, responder: Box<dyn Any + Send>) {
        lock(&self.held).push(responder);
    }

    /// `fs/read_text_file`, inside the root only; `line` is 1-based.
    pub(crate) fn read_text_file(
        &self,
        request: &ReadTextFileRequest,
    ) -> Result<ReadTextFileResponse, String> {
        let path = self.inside_root(&request.path)?;
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read it: {e}"))?;
        let skip = request
            .line
            .map_or(0, |line| line.saturating_sub(1) as usize);
        let take = request.limit.map_or(usize::MAX, |limit| limit as usize);
        let content = match (request.line, request.limit) {
            (None, None) => text,
            _ => text
                .split_inclusive('\n')
                .skip(skip)
                .take(take)
                .collect::<String>(),
        };
        Ok(ReadTextFileResponse::new(content))
    }

    /// `fs/write_text_file`, inside the root only.
    pub(crate) fn write_text_file(
        &self,
        request: &WriteTextFileRequest,
    ) -> Result<WriteTextFileResponse, String> {
        let path = self.inside_root(&request.path)?;
        std::fs::write(&path, &request.content).map_err(|e| format!("cannot write it: {e}"))?;
        Ok(WriteTextFileResponse::new())
    }

    /// `path` when it is absolute and, its symlinks resolved, beneath the root.
    fn inside_root(&self, path: &Path) -> Result<PathBuf, String> {
        if !path.is_absolute() {
            return Err("the path is not absolute".into());
        }
        // The file may not exist yet (a write): its directory must.
        let (dir, name) = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => (dir, name),
            _ => return Err("the path names no file".into()),
        };
        let dir = dir
            .canonicalize()
            .map_err(|e| format!("its directory cannot be resolved: {e}"))?;
        let resolved = match dir.join(name).canonicalize() {
            Ok(file) => file,
            Err(_) => dir.join(name),
        };
        let root = self
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.root.clone());
        if resolved.starts_with(&root) {
            Ok(resolved)
        } else {
            Err("the path is outside the scenario's root".into())
        }
    }
}

/// A tool call's title as the agent gave it.
pub(crate) fn title(tool_call: &Value) -> String {
    tool_call["title"].as_str().unwrap_or("?").to_string()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{
        PermissionOption, ToolCallUpdate, ToolCallUpdateFields,
    };

    use super::*;

    /// A permission request offering the options in an order no policy relies on.
    fn asking(session: &str) -> RequestPermissionRequest {
        let options = [
            ("r1", PermissionOptionKind::RejectOnce),
            ("a2", PermissionOptionKind::AllowAlways),
            ("a1", PermissionOptionKind::AllowOnce),
        ]
        .map(|(id, kind)| PermissionOption::new(id, id, kind))
        .to_vec();
        let fields = ToolCallUpdateFields::new().title("bash".to_string());
        RequestPermissionRequest::new(
            session.to_string(),
            ToolCallUpdate::new("call_1", fields),
            options,
        )
    }

    fn chosen(response: Option<RequestPermissionResponse>) -> Option<String> {
        let value = serde_json::to_value(response?).unwrap();
        value["outcome"]["optionId"].as_str().map(str::to_string)
    }

    #[test]
    fn permissions_are_answered_by_the_option_kind_the_policy_names() {
        let dir = tempfile::tempdir().unwrap();
        let side = ClientSide::new(dir.path());
        for (policy, option, reply) in [
            (PermissionPolicy::Once, Some("a1"), Some("once")),
            (PermissionPolicy::Always, Some("a2"), Some("always")),
            (PermissionPolicy::Reject, Some("r1"), Some("reject")),
            (PermissionPolicy::LeavePending, None, None),
        ] {
            side.set_policy("s", policy);
            assert_eq!(chosen(side.on_permission(&asking("s"))).as_deref(), option);
            let asks = side.asks_since("s", side.ask_count() - 1);
            assert_eq!(asks[0].reply, reply, "{policy:?}");
        }
        // Another session's policy is its own: left pending by default.
        assert_eq!(chosen(side.on_permission(&asking("other"))), None);
        assert!(side.last_activity().contains("left pending"));
    }

    #[test]
    fn files_are_served_inside_the_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let side = ClientSide::new(&root);
        let file = root.join("a.txt");
        side.write_text_file(&WriteTextFileRequest::new("s", &file, "one\ntwo\nthree\n"))
            .unwrap();
        let read = side
            .read_text_file(&ReadTextFileRequest::new("s", &file).line(2).limit(1))
            .unwrap();
        assert_eq!(read.content, "two\n");

        let outside = dir.path().join("outside.txt");
        let refused = side.write_text_file(&WriteTextFileRequest::new("s", &outside, "x"));
        assert!(refused.unwrap_err().contains("outside"));
        assert!(!outside.exists());
        std::os::unix::fs::symlink(dir.path(), root.join("escape")).unwrap();
        let through_link = root.join("escape").join("outside.txt");
        assert!(
            side.write_text_file(&WriteTextFileRequest::new("s", &through_link, "x"))
                .is_err()
        );
        assert!(
            side.read_text_file(&ReadTextFileRequest::new("s", "relative.txt"))
                .is_err()
        );
    }

    #[test]
    fn only_session_updates_read_are_counted() {
        let side = ClientSide::new(Path::new("/"));
        side.read_line(r#"{"jsonrpc":"2.0","method":"session/update","params":{}}"#);
        side.read_line(r#"{"jsonrpc":"2.0","id":1,"result":{"method":"session/update"}}"#);
        side.read_line(r#"{"jsonrpc":"2.0","method":"fs/read_text_file","id":2,"params":{}}"#);
        side.read_line("not json");
        assert_eq!(side.updates_read(), 1);
    }
}
