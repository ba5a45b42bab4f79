//! ACP agents: agents spoken to over the Agent Client Protocol (JSON-RPC on their stdio), owned
//! and confined like every agent, with the scripted model (or the scenario's real model) as
//! their model, and turns summarised as OpenCode's are; or driven by a product that is an ACP
//! client, through a relay (`relay.rs`) its agent command (`forward.rs`) reaches.

mod agent;
mod client_side;
mod connection;
mod error;
mod forward;
mod gemini;
mod kind;
mod npm_agent;
mod process;
mod qwen;
mod relay;
mod session;
mod slot;
mod traffic;
mod transport;
mod turn;

pub use agent::AcpAgent;
pub use error::AcpError;
pub(crate) use forward::run_forward;
pub(crate) use gemini::prepare as prepare_gemini;
pub use kind::AcpAgentKind;
pub(crate) use qwen::prepare as prepare_qwen;
pub use relay::AcpRelay;
pub use session::{AcpPrompt, AcpSession};
pub(crate) use slot::AcpSlot;
pub use turn::AcpTurn;
