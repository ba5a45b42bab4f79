//! What the run's pool owner and its lessees say over the pool's socket: one JSON object a line.
//! One connection is one lease: the lessee asks, is granted, and later releases; a connection
//! that closes before the release is a lessee that died (the kernel closes it even after
//! SIGKILL).

use std::io::{self, BufRead, Write};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::terms::{LeaseGrant, LeaseRequest};
use super::warm::SeatConfig;

/// The files of the pool's directory, beside the servers' and the lessees' roots.
pub(crate) const SOCKET: &str = "pool.sock";
pub(crate) const OWNER_FILE: &str = "owner.json";
/// The owner's stderr: what it says about kept roots and failures.
pub(crate) const OWNER_LOG: &str = "owner.log";
/// The owner marks of the servers the owner started, one a line: a replacing process sweeps
/// them when the owner died with its reaper.
pub(crate) const TOKENS: &str = "tokens";

/// A lessee's words.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToOwner {
    /// A shared server for the scenario whose root (in the pool's directory) and workspace
    /// these are; or, with `seat`, a warm workspace of that config on it (the owner's: no root
    /// of the scenario's then).
    Lease {
        request: LeaseRequest,
        root: Option<PathBuf>,
        workspace: Option<PathBuf>,
        // Boxed: the other words are a few bytes.
        seat: Option<Box<SeatConfig>>,
    },
    /// The scenario ended: `passed` hands the server back, a failure retires it and keeps both
    /// roots; `approved_always`: an ask may have been answered `always` (the seat's instance is
    /// then disposed).
    Release { passed: bool, approved_always: bool },
    /// The scenario's slot was dropped without an end (`Agent::kill_blocking`): the server is
    /// retired and kept.
    Abandon,
}

/// The owner's answers.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum FromOwner {
    Granted {
        grant: LeaseGrant,
    },
    /// The lease failed (a server could not start): the error as the owner reports it.
    Refused {
        error: String,
    },
    /// The release is done (sessions deleted, instance disposed, or the server retired);
    /// `seat_kept`: the seat went back to the pool, its root is not the scenario's to remove;
    /// `server_kept`: the server's root, kept as the failure's evidence (the lessee prints it,
    /// as a runner prints its own kept server roots).
    Released {
        seat_kept: bool,
        server_kept: Option<PathBuf>,
    },
}

/// Who owns the pool: written by the owner at its start, read by a process replacing it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct OwnerFile {
    pub(crate) pid: u32,
    /// Its owner mark (its own processes carry it).
    pub(crate) token: String,
}

pub(crate) fn send(to: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let mut line = serde_json::to_vec(message).map_err(io::Error::other)?;
    line.push(b'\n');
    to.write_all(&line)?;
    to.flush()
}

/// The next message; `None` at the end of the connection.
pub(crate) fn receive<T: DeserializeOwned>(from: &mut impl BufRead) -> io::Result<Option<T>> {
    let mut line = String::new();
    if from.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    serde_json::from_str(&line)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}
