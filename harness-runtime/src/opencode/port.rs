//! Choosing an agent's port. The server must be told a port (OpenCode's `--port 0` prefers
//! 4096), so the harness picks a free one and lets it go just before the server binds it: a
//! window in which another start can be handed the same port. Inside this process the window
//! is closed by remembering what was handed out; across processes (parallel test binaries,
//! nextest) a start that lost its port to someone else is retried on a new one.

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How many times a start is tried when its port was taken before the server bound it.
pub(crate) const ATTEMPTS: usize = 3;

/// How long a handed-out port is not handed out again: far longer than a server takes to bind.
const HANDED_OUT_FOR: Duration = Duration::from_secs(120);

/// Ports this process handed out lately, oldest first.
static HANDED_OUT: Mutex<VecDeque<(u16, Instant)>> = Mutex::new(VecDeque::new());

/// `previous` when it is still free (a restart keeps its endpoint), else a free port that this
/// process did not hand out lately.
pub(crate) fn pick(previous: u16) -> io::Result<u16> {
    if previous != 0 && TcpListener::bind((Ipv4Addr::LOCALHOST, previous)).is_ok() {
        return Ok(previous);
    }
    let mut handed = HANDED_OUT.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    while handed
        .front()
        .is_some_and(|(_, at)| now.duration_since(*at) > HANDED_OUT_FOR)
    {
        handed.pop_front();
    }
    // Probes stay bound until the choice is made, so each one is a port not offered before.
    let mut probes = Vec::new();
    loop {
        let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = probe.local_addr()?.port();
        if !handed.iter().any(|(p, _)| *p == port) || probes.len() >= 64 {
            handed.push_back((port, now));
            return Ok(port);
        }
        probes.push(probe);
    }
}

/// Whether another process holds `port` now: after our server exited before it was ready,
/// that means it most likely could not bind it.
pub(crate) fn taken(port: u16) -> bool {
    matches!(
        TcpListener::bind((Ipv4Addr::LOCALHOST, port)),
        Err(e) if e.kind() == io::ErrorKind::AddrInUse
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_handed_out_at_once_are_distinct_and_a_held_port_is_taken() {
        let mut ports: Vec<u16> = (0..200).map(|_| pick(0).unwrap()).collect();
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 200);
        let held = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = held.local_addr().unwrap().port();
        assert!(taken(port));
        drop(held);
        assert!(!taken(port));
        // A restart keeps its port while it is free.
        assert_eq!(pick(port).unwrap(), port);
    }
}
