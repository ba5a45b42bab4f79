//! The agents a scenario can run on, as the attribute spells them (`agents = ["qwen-code"]`)
//! and the run report names them: the runtime's `AnyAgentKind::name` reads them from here.

/// Every agent's spelling, in the order of the runtime's `AnyAgentKind::ALL`.
pub const AGENT_NAMES: [&str; 4] = ["opencode-http", "opencode-acp", "qwen-code", "gemini-cli"];
