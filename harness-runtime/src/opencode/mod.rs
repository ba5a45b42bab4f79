//! Provisioning: an isolated root, config, port, spawn, readiness, stop, restart and cleanup.

mod acp_launch;
mod agent;
mod agent_client;
mod config;
mod config_layer;
mod discover;
pub(crate) mod error;
mod logs;
mod models_catalog;
mod options;
mod pool;
mod port;
mod project;
mod provider_package;
mod provision;
mod ready;
mod root;
mod sandbox_plan;
mod server_process;
mod slot;

pub(crate) use acp_launch::{AcpContext, StdioLaunch, prepare_opencode_acp};
pub use agent::Agent;
pub use agent_client::DEFAULT_SESSION_TITLE;
pub(crate) use discover::{find_installed, find_opencode, installed_version};
pub use error::ProvisionError;
pub(crate) use models_catalog::ModelsCatalog;
pub use options::AgentOptions;
pub(crate) use pool::SharedPool;
pub(crate) use pool::likely as likely_shared;
pub(crate) use pool::plan_shares;
pub(crate) use pool::run_pool_owner;
pub(crate) use provision::{ProvisionContext, create_root, provision};
pub(crate) use root::AgentRoot;
pub(crate) use slot::AgentSlot;
