//! Products that are programs: a CLI, a Node app, anything that drives the agent through its
//! own client, started by the scenario with [`Live::start_product`](crate::Live::start_product).
//!
//! A product is owned like an agent: its own process group, the owner mark every descendant
//! inherits (swept when it ends, and by the reaper when the runner dies), terminate → kill →
//! reap when the scenario ends. When the scenario's agents are confined by the sandbox
//! ([`Live::sandboxed`](crate::Live::sandboxed)), so is the product: it writes beneath its agent's
//! root only, reads the system's directories and its own program (see [`ProductCommand`]), and
//! connects to its agent's port only. Its stdout and stderr are captured (in memory, in log files
//! in the agent's root, and on the run report's `product` lane) and shown redacted.
//!
//! At the scenario's end a product that exited non-zero, or is still running, fails the scenario
//! with the tail of its output, unless the scenario said so beforehand
//! ([`Product::expect_failure`], [`Product::expect_running`]).

mod capture;
mod command;
mod error;
mod policy;
mod running;
mod slot;

pub use command::ProductCommand;
pub use error::ProductError;
pub use running::{Product, ProductExit};
pub(crate) use slot::ProductSlot;

/// The variable a product finds its agent's URL in: `http://127.0.0.1:<port>`, the agent's
/// forwarded address (every request the product makes through it can be gated and is logged).
pub const AGENT_URL_ENV: &str = "LIVE_AGENT_URL";

/// The variable a product that is an ACP client finds its agent command in (see
/// `Live::acp_agent_for_product`): an executable taking no arguments whose stdio is the
/// scenario's ACP agent, every line passing the scenario's gates.
pub const ACP_AGENT_COMMAND_ENV: &str = "LIVE_ACP_AGENT_COMMAND";

/// The variable a product finds its agent's workspace in (the directory its sessions work in;
/// on a shared server, what a client names in `?directory=` or `x-opencode-directory`).
pub const AGENT_DIRECTORY_ENV: &str = "LIVE_AGENT_DIRECTORY";
