//! Choosing an agent's port. The server must be told a port (OpenCode's `--port 0` prefers
//! 4096), so the harness picks a free one and lets it go just before the server binds it. Two
//! things can take it in that window, and each is closed differently:
//!
//! - **Outgoing connections** (this process opens hundreds: health polls, event streams): the
//!   kernel gives them ports from its ephemeral range, so the harness picks outside that range,
//!   where no `connect` lands. The range is read from `/proc/sys/net/ipv4/ip_local_port_range`
//!   (on macOS the IANA default, 49152–65535, is assumed).
//! - **Another process binding on purpose** (a parallel test binary, nextest): each process walks
//!   the candidates from its own random offset, and a start whose log says its address was in use
//!   is retried on a new port (`server_process`), up to [`ATTEMPTS`] times.
//!
//! Inside this process the walk itself never hands out a port twice until it wraps around; a
//! short memory of handed-out ports covers the kernel fallback too.
//!
//! Limitation: when the ephemeral range leaves fewer than [`MIN_CANDIDATES`] ports above
//! [`FLOOR`], the kernel chooses (from the ephemeral range), and only the retry protects a start.

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::ops::RangeInclusive;
use std::sync::{LazyLock, Mutex};
use std::time::{Duration, Instant};

/// How many times a start is tried when its address was in use before the server bound it.
pub(crate) const ATTEMPTS: usize = 4;

/// Candidates start here: below are the ports services are configured on (8080, 11434, …).
const FLOOR: u16 = 20000;

/// Fewer candidates than this, and the kernel's choice is used instead.
const MIN_CANDIDATES: u32 = 1024;

/// How many taken candidates a pick skips before it gives up on the walk.
const MAX_PROBES: u32 = 512;

/// How long a handed-out port is not handed out again: far longer than a server takes to bind.
const HANDED_OUT_FOR: Duration = Duration::from_secs(120);

/// Where the kernel publishes the ports it gives outgoing connections.
const EPHEMERAL_RANGE_FILE: &str = "/proc/sys/net/ipv4/ip_local_port_range";

/// `previous` when it is still free (a restart keeps its endpoint), else a free port outside
/// the ephemeral range that this process did not hand out lately.
pub(crate) fn pick(previous: u16) -> io::Result<u16> {
    if previous != 0 && is_free(previous) {
        return Ok(previous);
    }
    let mut picker = PICKER.lock().unwrap_or_else(|e| e.into_inner());
    picker.forget_old(Instant::now());
    let port = match picker.walk() {
        Some(port) => port,
        None => picker.kernel_choice()?,
    };
    picker.handed_out.push_back((port, Instant::now()));
    Ok(port)
}

/// Whether a start's own output says it could not bind its address: the fixture agent says
/// `Address already in use`; OpenCode (through Effect's HTTP server) says only `ServeError`,
/// which is what its bind failure prints (measured with the port held by a listener and by a
/// connected socket). Read from the output of that start alone, not from a later probe: the
/// holder may be gone by then.
pub(crate) fn output_says_address_in_use(output: &str) -> bool {
    let lower = output.to_ascii_lowercase();
    lower.contains("address already in use")
        || lower.contains("eaddrinuse")
        || output.lines().any(|line| line.trim() == "ServeError")
}

/// The kernel's ephemeral range, or the platform's default when it cannot be read.
pub(crate) fn ephemeral_range() -> RangeInclusive<u16> {
    std::fs::read_to_string(EPHEMERAL_RANGE_FILE)
        .ok()
        .and_then(|text| parse_range(&text))
        .unwrap_or(if cfg!(target_os = "linux") {
            32768..=60999
        } else {
            49152..=65535
        })
}

fn parse_range(text: &str) -> Option<RangeInclusive<u16>> {
    let mut numbers = text.split_whitespace().map(str::parse::<u16>);
    let (low, high) = (numbers.next()?.ok()?, numbers.next()?.ok()?);
    (low <= high).then_some(low..=high)
}

/// The ports at or above [`FLOOR`] outside `ephemeral`, as spans.
fn candidates(ephemeral: &RangeInclusive<u16>) -> Vec<RangeInclusive<u16>> {
    let mut spans = Vec::new();
    if *ephemeral.start() > FLOOR {
        spans.push(FLOOR..=ephemeral.start() - 1);
    }
    if *ephemeral.end() < u16::MAX {
        spans.push((*ephemeral.end() + 1).max(FLOOR)..=u16::MAX);
    }
    spans
}

fn is_free(port: u16) -> bool {
    TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok()
}

static PICKER: LazyLock<Mutex<Picker>> = LazyLock::new(|| Mutex::new(Picker::new()));

/// A walk over the candidates from a random offset, and the ports handed out lately.
struct Picker {
    spans: Vec<RangeInclusive<u16>>,
    total: u32,
    cursor: u32,
    handed_out: VecDeque<(u16, Instant)>,
}

impl Picker {
    fn new() -> Self {
        let spans = candidates(&ephemeral_range());
        let total: u32 = spans
            .iter()
            .map(|s| u32::from(s.end() - s.start()) + 1)
            .sum();
        let mut seed = [0u8; 4];
        // Without randomness every process starts at the same place: the retry still holds.
        let _ = getrandom::fill(&mut seed);
        Self {
            spans,
            total,
            cursor: u32::from_le_bytes(seed) % total.max(1),
            handed_out: VecDeque::new(),
        }
    }

    fn forget_old(&mut self, now: Instant) {
        while self
            .handed_out
            .front()
            .is_some_and(|(_, at)| now.duration_since(*at) > HANDED_OUT_FOR)
        {
            self.handed_out.pop_front();
        }
    }

    fn recently_handed_out(&self, port: u16) -> bool {
        self.handed_out.iter().any(|(p, _)| *p == port)
    }

    /// The next free candidate, or `None` when there are too few candidates or too many taken.
    fn walk(&mut self) -> Option<u16> {
        if self.total < MIN_CANDIDATES {
            return None;
        }
        for _ in 0..MAX_PROBES {
            let port = self.nth(self.cursor);
            self.cursor = (self.cursor + 1) % self.total;
            if !self.recently_handed_out(port) && is_free(port) {
                return Some(port);
            }
        }
        None
    }

    fn nth(&self, mut n: u32) -> u16 {
        for span in &self.spans {
            let len = u32::from(span.end() - span.start()) + 1;
            if n < len {
                return span.start() + n as u16;
            }
            n -= len;
        }
        unreachable!("the cursor stays below the number of candidates")
    }

    /// A port the kernel chose, not handed out lately. Probes stay bound until the choice is
    /// made, so each one is a port not offered before.
    fn kernel_choice(&self) -> io::Result<u16> {
        let mut probes = Vec::new();
        loop {
            let probe = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
            let port = probe.local_addr()?.port();
            if !self.recently_handed_out(port) || probes.len() >= 64 {
                return Ok(port);
            }
            probes.push(probe);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_handed_out_at_once_are_distinct_free_and_outside_the_ephemeral_range() {
        let ephemeral = ephemeral_range();
        let mut ports: Vec<u16> = (0..300).map(|_| pick(0).unwrap()).collect();
        for port in &ports {
            assert!(!ephemeral.contains(port), "{port} is in {ephemeral:?}");
            assert!(*port >= FLOOR, "{port}");
        }
        ports.sort_unstable();
        ports.dedup();
        assert_eq!(ports.len(), 300);
        // A restart keeps its port while it is free, and gets another once it is held.
        let held = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        let port = held.local_addr().unwrap().port();
        assert_ne!(pick(port).unwrap(), port);
        drop(held);
        assert_eq!(pick(port).unwrap(), port);
    }

    #[test]
    fn the_candidates_are_what_the_ephemeral_range_leaves_above_the_floor() {
        assert_eq!(parse_range("32768\t60999\n"), Some(32768..=60999));
        assert_eq!(parse_range("60999 32768"), None);
        assert_eq!(parse_range("garbage"), None);
        assert_eq!(candidates(&(32768..=60999)), [20000..=32767, 61000..=65535]);
        assert_eq!(candidates(&(49152..=65535)), [20000..=49151]);
        assert_eq!(
            candidates(&(1024..=65535)),
            Vec::<RangeInclusive<u16>>::new()
        );
        assert_eq!(candidates(&(1024..=30000)), [30001..=65535]);
    }

    #[test]
    fn too_few_candidates_fall_back_to_the_kernel() {
        let mut picker = Picker {
            spans: vec![65000..=65010],
            total: 11,
            cursor: 0,
            handed_out: VecDeque::new(),
        };
        assert_eq!(picker.walk(), None);
        assert!(picker.kernel_choice().unwrap() > 0);
    }

    #[test]
    fn an_address_in_use_is_recognised_in_either_agent_output() {
        assert!(output_says_address_in_use(
            "fixture agent: cannot listen on the requested port: Address already in use (os error 98)"
        ));
        assert!(output_says_address_in_use(
            "\u{1b}[91m\u{1b}[1mError: \u{1b}[0mUnexpected error\n\nServeError\n"
        ));
        assert!(output_says_address_in_use(
            "error: listen EADDRINUSE 127.0.0.1:4096"
        ));
        assert!(!output_says_address_in_use(
            "Error: config is invalid\nthe agent exited"
        ));
    }
}
