//! A process's CPU from `/proc/<pid>/stat`: user and system time, its own and that of the
//! children it waited for (a server's `git` and tool processes). Linux only; elsewhere every
//! process reads as ended.
//!
//! `tests/bench_output.rs` includes this file (it needs `libc` only).

use std::collections::BTreeMap;
use std::time::Duration;

/// `utime + stime + cutime + cstime` in clock ticks, from one `/proc/<pid>/stat` line. The
/// command name in parentheses may hold spaces and parentheses: the fields are counted after
/// its last `)`.
pub fn stat_ticks(stat: &str) -> Option<u64> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    // After the name: state (field 3) … utime is field 14, cstime field 17.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields
        .get(11..15)?
        .iter()
        .map(|f| f.parse::<u64>().ok())
        .sum()
}

/// The ticks of every pid of `pids` that still runs.
pub fn ticks_of(pids: &[u32]) -> BTreeMap<u32, u64> {
    pids.iter()
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((*pid, stat_ticks(&stat)?))
        })
        .collect()
}

/// Clock ticks as time.
pub fn duration(ticks: u64) -> Duration {
    // SAFETY: sysconf only reads a system constant.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let per_second = if per_second > 0 {
        per_second as u64
    } else {
        100
    };
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}
