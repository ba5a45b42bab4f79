//! The process table, read from `/proc`: who carries a run's marks, who descends from a runner.

use std::collections::{HashMap, HashSet};

/// A process identity that survives pid reuse: the pid and its start time (clock ticks since
/// boot, field 22 of `/proc/<pid>/stat`).
pub type Identity = (u32, u64);

/// One live process (zombies are left out: they are dead, only not yet reaped).
#[derive(Clone, Debug)]
pub struct Proc {
    /// Its pid.
    pub pid: u32,
    /// Its parent's pid.
    pub ppid: u32,
    /// Its start time, in clock ticks since boot.
    pub start: u64,
}

/// `/proc/<pid>/stat` → `(ppid, state, start time)`; the command name may hold spaces and
/// parentheses, so fields are counted after its last `)`.
fn stat(pid: u32) -> Option<(u32, char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3 (state): ppid is field 4, starttime field 22.
    let state = fields.first()?.chars().next()?;
    let ppid = fields.get(1)?.parse().ok()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((ppid, state, start))
}

/// Every live process but this one.
pub fn table() -> Vec<Proc> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| {
            let (ppid, state, start) = stat(pid)?;
            (state != 'Z').then_some(Proc { pid, ppid, start })
        })
        .collect()
}

/// The identities of every live descendant of `root` (not `root` itself).
pub fn descendants(root: u32, table: &[Proc]) -> HashSet<Identity> {
    let mut children: HashMap<u32, Vec<&Proc>> = HashMap::new();
    for proc in table {
        children.entry(proc.ppid).or_default().push(proc);
    }
    let mut found = HashSet::new();
    let mut stack = vec![root];
    while let Some(pid) = stack.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if found.insert((child.pid, child.start)) {
                stack.push(child.pid);
            }
        }
    }
    found
}

/// Whether `pid`'s environment holds an entry for which `matches` is true (unreadable: no).
pub fn environ_has(pid: u32, matches: impl Fn(&[u8]) -> bool) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|b| *b == 0).any(matches))
}

/// The value of `name` in `pid`'s environment, while it runs.
pub fn environ_value(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ.split(|b| *b == 0).find_map(|entry| {
        let entry = std::str::from_utf8(entry).ok()?;
        entry.strip_prefix(&prefix).map(str::to_string)
    })
}

/// `pid: command line`, for a diagnostic.
pub fn describe(pid: u32) -> String {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    format!(
        "{pid}: {}",
        String::from_utf8_lossy(&cmdline).replace('\0', " ").trim()
    )
}

/// What a process holds, read from `/proc`: what a long run must not let grow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Usage {
    /// Its open file descriptors (`/proc/<pid>/fd`).
    pub fds: usize,
    /// Its threads (`Threads:` of `/proc/<pid>/status`).
    pub threads: usize,
    /// Its resident set in KiB (`VmRSS:`).
    pub rss_kib: u64,
}

/// `pid`'s usage; `None` once it is gone (or a zombie, which has no resident set).
pub fn usage(pid: u32) -> Option<Usage> {
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let value = status.lines().find_map(|l| l.strip_prefix(name))?;
        value.trim().trim_end_matches("kB").trim().parse().ok()
    };
    Some(Usage {
        fds,
        threads: usize::try_from(field("Threads:")?).ok()?,
        rss_kib: field("VmRSS:")?,
    })
}
