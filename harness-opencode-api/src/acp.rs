//! The Agent Client Protocol's methods and `session/update` kinds (v1, as the
//! `agent-client-protocol-schema` 1.17 crate the runtime speaks it with defines them), for
//! the `acp …` gate spellings: a misspelt method or update kind is caught as a route is.

/// Every v1 method, either direction: the client's requests and notifications to the agent,
/// and the agent's to the client.
pub const METHODS: [&str; 22] = [
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/list",
    "session/resume",
    "session/close",
    "session/fork",
    "session/prompt",
    "session/cancel",
    "session/set_mode",
    "session/set_model",
    "session/set_config_option",
    "session/update",
    "session/request_permission",
    "fs/read_text_file",
    "fs/write_text_file",
    "terminal/create",
    "terminal/output",
    "terminal/wait_for_exit",
    "terminal/kill",
    "terminal/release",
];

/// The kinds of `session/update` (its `sessionUpdate` field).
pub const UPDATES: [&str; 11] = [
    "user_message_chunk",
    "agent_message_chunk",
    "agent_thought_chunk",
    "tool_call",
    "tool_call_update",
    "plan",
    "available_commands_update",
    "current_mode_update",
    "config_option_update",
    "session_info_update",
    "usage_update",
];
