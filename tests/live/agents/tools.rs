//! What differs between agents in what the scripted model writes: their tools' names and
//! arguments, said here once.

use harness_runtime::any_agent::AnyAgentKind;
use harness_runtime::prelude::*;

/// The model's call of `kind`'s shell tool running `command`.
pub(super) fn shell(kind: AnyAgentKind, command: &str, description: &str) -> Reply {
    match kind {
        AnyAgentKind::QwenCode | AnyAgentKind::GeminiCli => Reply::tool_call(
            "run_shell_command",
            json!({"command": command, "description": description, "is_background": false}),
        ),
        _ => Reply::tool_call(
            "bash",
            json!({"command": command, "description": description}),
        ),
    }
}

/// The model's call of `kind`'s todo tool writing `steps` (content, status) as its plan.
pub(super) fn plan(kind: AnyAgentKind, steps: &[(&str, &str)]) -> Reply {
    match kind {
        AnyAgentKind::QwenCode => {
            let todos: Vec<_> = steps
                .iter()
                .enumerate()
                .map(|(i, (content, status))| {
                    json!({"id": (i + 1).to_string(), "content": content, "status": status})
                })
                .collect();
            Reply::tool_call("todo_write", json!({"todos": todos}))
        }
        AnyAgentKind::GeminiCli => {
            let todos: Vec<_> = steps
                .iter()
                .map(|(content, status)| json!({"description": content, "status": status}))
                .collect();
            Reply::tool_call("write_todos", json!({"todos": todos}))
        }
        _ => {
            let todos: Vec<_> = steps
                .iter()
                .map(|(content, status)| {
                    json!({"content": content, "status": status, "priority": "medium"})
                })
                .collect();
            Reply::tool_call("todowrite", json!({"todos": todos}))
        }
    }
}

/// The model's call of `kind`'s tool writing `content` into the file at `path` (absolute).
pub(super) fn write_file(kind: AnyAgentKind, path: &str, content: &str) -> Reply {
    match kind {
        AnyAgentKind::QwenCode | AnyAgentKind::GeminiCli => {
            Reply::tool_call("write_file", json!({"file_path": path, "content": content}))
        }
        _ => Reply::tool_call("write", json!({"filePath": path, "content": content})),
    }
}
