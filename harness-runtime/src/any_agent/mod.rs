//! Any agent, one surface: a scenario that lists several agents
//! (`#[live_agent_test(agents = ["opencode-http", "opencode-acp", "qwen-code"])]`) is one scenario
//! per agent, and its body drives whichever it runs on through [`AnyAgent`], [`AnySession`]
//! and [`AnyTurn`], whose summary has the same evidence shape on every agent.

mod agent;
mod error;
mod kind;
mod turn;

pub use agent::{AnyAgent, AnyPrompt, AnySession};
pub use error::AnyAgentError;
pub use kind::AnyAgentKind;
pub use turn::AnyTurn;
