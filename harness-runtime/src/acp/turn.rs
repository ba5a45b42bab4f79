//! One prompt's turn on an ACP agent: the session updates it brought, the permission requests
//! and their replies, and how it stopped; summarised in the same shape as an OpenCode turn.

use serde_json::Value;

use super::client_side::{PermissionAsk, title};
use crate::evidence::{
    EventTrace, InteractionSummary, MessageSummary, ToolCallSummary, TurnSummary,
};

/// Updates about the session rather than the turn: agents send them when they like (OpenCode
/// sends its commands just after `session/new` answered, so they land before or inside the
/// first turn by timing alone). [`AcpTurn::updates`] keeps them; the summary leaves them out.
const ABOUT_THE_SESSION: [&str; 4] = [
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
];

/// A finished turn of an [`AcpSession`](super::AcpSession).
#[derive(Clone, Debug)]
pub struct AcpTurn {
    pub(crate) updates: Vec<Value>,
    pub(crate) asks: Vec<PermissionAsk>,
    /// `end_turn`, `cancelled`, `refusal`, `max_tokens`, `max_turn_requests`.
    pub(crate) stop_reason: String,
}

impl AcpTurn {
    /// How the turn stopped, as the agent said: `end_turn`, `cancelled`, `refusal`…
    pub fn stop_reason(&self) -> &str {
        &self.stop_reason
    }

    /// The text of the agent's message chunks, in order.
    pub fn text(&self) -> String {
        self.of_kind("agent_message_chunk")
            .filter_map(|u| u["content"]["text"].as_str())
            .collect()
    }

    /// The turn's `session/update` payloads in arrival order, as the agent sent them.
    pub fn updates(&self) -> &[Value] {
        &self.updates
    }

    /// Each tool call's id with its latest state (`tool_call` merged with its updates).
    pub fn tool_calls(&self) -> Vec<Value> {
        let mut calls: Vec<(String, Value)> = Vec::new();
        for update in &self.updates {
            let kind = update["sessionUpdate"].as_str().unwrap_or_default();
            if kind != "tool_call" && kind != "tool_call_update" {
                continue;
            }
            let id = update["toolCallId"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let position = match calls.iter().position(|(known, _)| *known == id) {
                Some(position) => position,
                None => {
                    calls.push((id, Value::Object(Default::default())));
                    calls.len() - 1
                }
            };
            if let (Value::Object(state), Value::Object(fields)) = (&mut calls[position].1, update)
            {
                for (key, value) in fields {
                    if !value.is_null() {
                        state.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        calls.into_iter().map(|(_, state)| state).collect()
    }

    /// The turn as evidence: its updates by kind (repeats counted; those about the session, such
    /// as `available_commands_update`, left out), the agent's message with the
    /// kinds of its parts, tool calls with their final status, permission requests with the
    /// replies given, the last plan, and the stop reason.
    pub fn summary(&self) -> TurnSummary {
        let events = EventTrace::from_types(
            self.updates
                .iter()
                .map(|u| u["sessionUpdate"].as_str().unwrap_or("?"))
                .filter(|kind| !ABOUT_THE_SESSION.contains(kind)),
        );
        let tool_calls = self
            .tool_calls()
            .iter()
            .map(|call| ToolCallSummary {
                tool: tool_name(call),
                status: call["status"].as_str().unwrap_or("pending").to_string(),
            })
            .collect();
        let interactions = self
            .asks
            .iter()
            .map(|ask| InteractionSummary {
                kind: "permission".into(),
                subject: tool_name(&ask.tool_call),
                reply: ask.reply.map(str::to_string),
            })
            .collect();
        let plan = self
            .of_kind("plan")
            .last()
            .and_then(|plan| plan["entries"].as_array())
            .map(|entries| {
                entries
                    .iter()
                    .map(|e| {
                        format!(
                            "{}: {}",
                            e["status"].as_str().unwrap_or("?"),
                            e["content"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        TurnSummary {
            events,
            messages: self.messages(),
            tool_calls,
            interactions,
            plan,
            stop_reason: Some(self.stop_reason.clone()),
            ..TurnSummary::default()
        }
    }

    fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Value> {
        self.updates
            .iter()
            .filter(move |u| u["sessionUpdate"].as_str() == Some(kind))
    }

    /// Messages as runs of chunks by role; a part per run of one kind within a message (chunks
    /// without text make none).
    fn messages(&self) -> Vec<MessageSummary> {
        let mut messages: Vec<MessageSummary> = Vec::new();
        for update in &self.updates {
            // Qwen Code ends each model answer with an empty chunk carrying its usage: no part.
            if update["content"]["text"] == "" {
                continue;
            }
            let (role, part) = match update["sessionUpdate"].as_str() {
                Some("user_message_chunk") => ("user", "text"),
                Some("agent_message_chunk") => ("assistant", "text"),
                Some("agent_thought_chunk") => ("assistant", "reasoning"),
                Some("tool_call") => ("assistant", "tool"),
                _ => continue,
            };
            if messages.last().is_none_or(|m| m.role != role) {
                messages.push(MessageSummary {
                    role: role.into(),
                    parts: Vec::new(),
                });
            }
            let parts = &mut messages.last_mut().expect("pushed").parts;
            if parts.last().is_none_or(|last| last != part) || part == "tool" {
                parts.push(part.into());
            }
        }
        messages
    }
}

/// A tool call as evidence: its kind (`execute`, `edit`, `read`…) and title, which agents word
/// as they like.
fn tool_name(call: &Value) -> String {
    match call["kind"].as_str() {
        Some(kind) => format!("{kind}: {}", title(call)),
        None => title(call),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn turn(updates: Vec<Value>, asks: Vec<PermissionAsk>) -> AcpTurn {
        AcpTurn {
            updates,
            asks,
            stop_reason: "end_turn".into(),
        }
    }

    #[test]
    fn a_summary_reads_like_an_opencode_turn() {
        let turn = turn(
            vec![
                json!({"sessionUpdate": "available_commands_update", "availableCommands": []}),
                json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "hm"}}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "bash", "kind": "execute", "status": "pending"}),
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "title": "ls", "status": "completed"}),
                json!({"sessionUpdate": "plan", "entries": [{"content": "look", "status": "completed", "priority": "high"}]}),
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Do"}}),
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "ne."}}),
            ],
            vec![PermissionAsk {
                session: "s".into(),
                tool_call: json!({"title": "ls", "kind": "execute"}),
                reply: Some("once"),
            }],
        );
        assert_eq!(turn.text(), "Done.");
        let summary = serde_json::to_value(turn.summary()).unwrap();
        assert_eq!(
            summary,
            json!({
                "events": ["agent_thought_chunk", "tool_call", "tool_call_update", "plan", "agent_message_chunk ×2"],
                "messages": [{"role": "assistant", "parts": ["reasoning", "tool", "text"]}],
                "tool_calls": [{"tool": "execute: ls", "status": "completed"}],
                "interactions": [{"kind": "permission", "subject": "execute: ls", "reply": "once"}],
                "plan": ["completed: look"],
                "stop_reason": "end_turn",
            })
        );
    }
}
