//! What a scenario asks of the shared servers' pool and what it is granted: plain data, the same
//! whether the pool lives in this process (`cargo test`) or in a pool process of the run that
//! several test processes lease from (nextest runs one process per scenario). Serialisable: a
//! remote lease sends them as JSON lines over the pool's socket.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A scenario's request for a shared server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LeaseRequest {
    /// The `opencode` the server must run (a pool serves one program per server).
    pub(crate) program: PathBuf,
    /// `<topic>::<fn>`: noted in the server's root (`leased-by`) as the evidence's owner.
    pub(crate) scenario: String,
    /// What a warm workspace must match to be reused; `None`: a fresh directory.
    pub(crate) seat: Option<SeatRequest>,
}

/// What makes a warm workspace reusable by a scenario: OpenCode caches a directory's config in
/// its booted instance, so only a scenario whose workspace config is the same may reuse one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SeatRequest {
    /// A digest of the workspace config with the model's port left out (the seat's own stable
    /// model port stands in for it).
    pub(crate) key: String,
    /// The port of the scenario's model (scripted, or a cassette's replay) the seat's stable
    /// model port forwards to while the lease lasts.
    pub(crate) model_port: u16,
}

/// The lease a scenario was granted.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LeaseGrant {
    pub(crate) server: ServerFacts,
    /// The warm workspace leased with the server, when the request asked for one.
    pub(crate) seat: Option<SeatGrant>,
}

/// What a lessee knows of its server: enough to talk to it, redact it and diagnose it, whichever
/// process owns it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ServerFacts {
    pub(crate) port: u16,
    pub(crate) pid: Option<u32>,
    /// The owner mark in the server's environment (the sweep and the reaper find it by it).
    pub(crate) owner_token: String,
    /// The server's root and home (its `HOME`): the scenario's redactor names them.
    pub(crate) root: PathBuf,
    pub(crate) home: PathBuf,
    /// Where the server's output is copied: a failure's log tail is read from them.
    pub(crate) stdout_log: PathBuf,
    pub(crate) stderr_log: PathBuf,
}

/// A workspace of the pool's, booted or new, leased with its server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SeatGrant {
    /// The seat's root; its `workspace/` is the scenario's workspace.
    pub(crate) root: PathBuf,
    /// Its instance is booted with the same config: the scenario must not rewrite the config.
    pub(crate) warm: bool,
    /// The stable port the seat's config names for the model; it forwards to the request's
    /// `model_port` while the lease lasts.
    pub(crate) model_port: u16,
}
