//! OpenCode's own guard for a workspace on a shared server: its file tools (read, write, edit,
//! list, glob, grep) run in the server's process, which the kernel confines only to the pool's
//! directory, where every lessee's root is. So the workspace's `external_directory` permission
//! denies the pool, except the scenario's own root and OpenCode's saved tool output, which keep
//! the action the scenario's rules give them. On a server of its own the kernel refuses those
//! paths anyway: a denied call fails where it would have failed, without asking first.

use std::path::Path;

use serde_json::{Map, Value};

/// The permission that guards paths outside the workspace.
const EXTERNAL: &str = "external_directory";
/// OpenCode's defaults when the scenario's rules say nothing of a path: ask, except its saved
/// tool output (`<data>/tool-output`), which it allows.
const DEFAULT_ACTION: &str = "ask";
const TOOL_OUTPUT_ACTION: &str = "allow";

/// Adds to `config`'s permission: deny `external_directory` beneath each of `pools`, then give
/// `root` and the server's saved tool output (beneath `server_root`) the action the scenario's
/// rules give paths outside the workspace. OpenCode takes the last rule that matches; serde_json
/// writes keys sorted, and a pool's `<pool>/*` sorts before every longer pattern beneath it.
pub(crate) fn deny_the_pool(config: &mut Value, pools: &[&Path], root: &Path, server_root: &Path) {
    let Some(object) = config.as_object_mut() else {
        return;
    };
    let permission = object
        .entry("permission")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::String(action) = permission {
        // A bare action applies to every permission: the same as `{"*": action}`.
        *permission = Value::Object(Map::from_iter([(
            "*".into(),
            Value::String(action.clone()),
        )]));
    }
    let Some(permission) = permission.as_object_mut() else {
        return;
    };
    let scenario_action = scenario_action(permission);
    let rules = permission
        .entry(EXTERNAL)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::String(action) = rules {
        *rules = Value::Object(Map::from_iter([(
            "*".into(),
            Value::String(action.clone()),
        )]));
    }
    let Some(rules) = rules.as_object_mut() else {
        return;
    };
    let pattern = |dir: &Path| format!("{}/*", dir.display());
    for pool in pools {
        rules.insert(pattern(pool), "deny".into());
    }
    let tool_output = server_root
        .join("xdg")
        .join("data")
        .join("opencode")
        .join("tool-output");
    for (dir, default) in [(root, DEFAULT_ACTION), (&tool_output, TOOL_OUTPUT_ACTION)] {
        let action = scenario_action.clone().unwrap_or_else(|| default.into());
        rules.insert(pattern(dir), action);
    }
}

/// The action the scenario's rules give any path outside the workspace: its `external_directory`
/// action (a bare one, or its `*` pattern's), else its catch-all `*` action; `None` when they
/// name none (OpenCode's defaults then decide).
fn scenario_action(permission: &Map<String, Value>) -> Option<Value> {
    let external = match permission.get(EXTERNAL) {
        Some(Value::String(action)) => Some(action.clone()),
        Some(Value::Object(rules)) => rules.get("*").and_then(Value::as_str).map(str::to_string),
        _ => None,
    };
    external
        .or_else(|| {
            permission
                .get("*")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .map(Value::String)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn guarded(permission: Value) -> Value {
        let mut config = json!({"model": "scripted/m", "permission": permission});
        deny_the_pool(
            &mut config,
            &[Path::new("/tmp/pool")],
            Path::new("/tmp/pool/live-me"),
            Path::new("/tmp/pool/live-server"),
        );
        config["permission"].clone()
    }

    const OUTPUT: &str = "/tmp/pool/live-server/xdg/data/opencode/tool-output/*";

    /// `"*": "allow"` (the sandbox scenarios): the pool is denied, the own root still allowed.
    #[test]
    fn an_allowing_scenario_keeps_its_root_and_loses_the_pool() {
        assert_eq!(
            guarded(json!({"*": "allow"})),
            json!({"*": "allow", "external_directory": {
                "/tmp/pool/*": "deny",
                "/tmp/pool/live-me/*": "allow",
                OUTPUT: "allow",
            }})
        );
        // Sorted as written: the pool's rule first, so the narrower ones after it win.
        let text = guarded(json!({"*": "allow"}))["external_directory"].to_string();
        assert!(
            text.find("/tmp/pool/*") < text.find("/tmp/pool/live-me/*"),
            "{text}"
        );
    }

    /// The harness's default (`external_directory: deny`) stays a denial everywhere.
    #[test]
    fn a_denying_scenario_still_denies_everything() {
        assert_eq!(
            guarded(json!({"*": "allow", "external_directory": "deny"})),
            json!({"*": "allow", "external_directory": {
                "*": "deny",
                "/tmp/pool/*": "deny",
                "/tmp/pool/live-me/*": "deny",
                OUTPUT: "deny",
            }})
        );
    }

    /// Rules that say nothing of outside paths leave OpenCode's defaults for the root and the
    /// saved output; a bare action and patterns of the scenario's are kept.
    #[test]
    fn silent_bare_and_patterned_rules() {
        assert_eq!(
            guarded(json!({"bash": "ask"})),
            json!({"bash": "ask", "external_directory": {
                "/tmp/pool/*": "deny",
                "/tmp/pool/live-me/*": "ask",
                OUTPUT: "allow",
            }})
        );
        assert_eq!(guarded(json!("allow"))["*"], json!("allow"));
        assert_eq!(
            guarded(json!("allow"))["external_directory"]["/tmp/pool/live-me/*"],
            json!("allow")
        );
        let patterned = guarded(json!({"external_directory": {"/srv/*": "allow"}}));
        assert_eq!(patterned["external_directory"]["/srv/*"], json!("allow"));
        assert_eq!(
            patterned["external_directory"]["/tmp/pool/live-me/*"],
            json!("ask")
        );
    }
}
