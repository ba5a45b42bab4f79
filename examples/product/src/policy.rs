//! What the product allows the agent: reads anywhere the agent may read, edits inside its own
//! workspace, nothing else.

use std::path::{Component, Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::client::Reply;
use crate::events::PermissionAsk;

/// The permissions that only read.
const READS: &[&str] = &["read", "glob", "grep", "list", "codesearch", "lsp"];

/// The product's answer to one ask, with why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// Allowed once.
    Approve,
    /// Refused.
    Reject {
        /// Why, as the agent is told.
        reason: String,
    },
}

impl Verdict {
    /// The reply that carries it.
    pub fn reply(&self) -> Reply {
        match self {
            Verdict::Approve => Reply::Once,
            Verdict::Reject { .. } => Reply::Reject,
        }
    }

    /// The message sent with a reject.
    pub fn message(&self) -> Option<&str> {
        match self {
            Verdict::Approve => None,
            Verdict::Reject { reason } => Some(reason),
        }
    }
}

/// Judges `ask` for a product working in `workspace`.
pub fn judge(ask: &PermissionAsk, workspace: &Path) -> Verdict {
    let reject = |reason: String| Verdict::Reject { reason };
    match ask.permission.as_str() {
        read if READS.contains(&read) => Verdict::Approve,
        "edit" | "write" => {
            let targets = edit_targets(ask, workspace);
            match targets.iter().find(|t| !inside(t, workspace)) {
                Some(outside) => reject(format!(
                    "writes outside the workspace are not allowed: {}",
                    outside.display()
                )),
                None if targets.is_empty() => reject("an edit that names no file".into()),
                None => Verdict::Approve,
            }
        }
        "external_directory" => reject("the product keeps the agent inside its workspace".into()),
        other => reject(format!("the product does not allow `{other}`")),
    }
}

/// The files an edit ask would write: its `filepath`, else its patterns (relative ones are
/// relative to the workspace).
fn edit_targets(ask: &PermissionAsk, workspace: &Path) -> Vec<PathBuf> {
    if let Some(path) = ask.metadata.get("filepath").and_then(Value::as_str) {
        return vec![workspace.join(path)];
    }
    ask.patterns.iter().map(|p| workspace.join(p)).collect()
}

/// Whether `path` (absolute) stays inside `workspace` once `.` and `..` are resolved lexically;
/// symlinks are the agent's sandbox's business, not this check's.
fn inside(path: &Path, workspace: &Path) -> bool {
    let mut resolved = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                resolved.pop();
            }
            Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved.starts_with(workspace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ask(permission: &str, patterns: &[&str], metadata: Value) -> PermissionAsk {
        PermissionAsk {
            id: "per_1".into(),
            session_id: "ses_1".into(),
            permission: permission.into(),
            patterns: patterns.iter().map(|p| p.to_string()).collect(),
            metadata,
        }
    }

    #[test]
    fn reads_are_approved_anywhere() {
        let w = Path::new("/w");
        assert_eq!(
            judge(&ask("read", &["/etc/hosts"], json!({})), w),
            Verdict::Approve
        );
        assert_eq!(judge(&ask("grep", &["*"], json!({})), w), Verdict::Approve);
    }

    #[test]
    fn edits_inside_the_workspace_are_approved_outside_rejected_naming_the_file() {
        let w = Path::new("/w");
        assert_eq!(
            judge(&ask("edit", &["a.txt"], json!({"filepath": "/w/a.txt"})), w),
            Verdict::Approve
        );
        assert_eq!(
            judge(&ask("edit", &["sub/b.txt"], json!({})), w),
            Verdict::Approve
        );
        let Verdict::Reject { reason } =
            judge(&ask("edit", &["x"], json!({"filepath": "/w/../etc/x"})), w)
        else {
            panic!("an escape by .. was approved");
        };
        assert!(reason.contains("/etc/x"), "{reason}");
        assert!(matches!(
            judge(&ask("edit", &["/tmp/y"], json!({})), w),
            Verdict::Reject { .. }
        ));
        assert!(matches!(
            judge(&ask("edit", &[], json!({})), w),
            Verdict::Reject { .. }
        ));
    }

    #[test]
    fn everything_else_is_rejected() {
        let w = Path::new("/w");
        for permission in ["external_directory", "bash", "webfetch"] {
            let verdict = judge(&ask(permission, &["*"], json!({})), w);
            assert_eq!(verdict.reply(), Reply::Reject, "{permission}");
            assert!(verdict.message().is_some());
        }
    }
}
