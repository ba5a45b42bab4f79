//! The suite's peak memory: the sum of the resident sets of every process the runner started
//! (its `opencode serve` servers, the fixture agents, what their tools run), sampled from
//! `/proc` while a run goes on. Linux only; elsewhere it measures nothing and says so.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the process tree is read: servers live for seconds, so a peak lasts longer.
const EVERY: Duration = Duration::from_millis(250);

/// Samples the descendants of one process until [`Sampler::finish`].
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl Sampler {
    pub fn start(runner: u32) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = 0;
            while !flag.load(Ordering::SeqCst) {
                peak = peak.max(descendants_rss(runner));
                std::thread::sleep(EVERY);
            }
            peak
        });
        Sampler { stop, thread }
    }

    /// The peak sum, in bytes (0 where `/proc` is missing).
    pub fn finish(self) -> u64 {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().unwrap_or(0)
    }
}

/// The summed `VmRSS` of every descendant of `root` (not `root` itself: the runner is the
/// same process in both modes).
fn descendants_rss(root: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut parents = HashMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = parent_of(pid) {
            parents.insert(pid, ppid);
        }
    }
    parents
        .keys()
        .filter(|&&pid| descends_from(pid, root, &parents))
        .filter_map(|&pid| rss_of(pid))
        .sum()
}

fn descends_from(mut pid: u32, root: u32, parents: &HashMap<u32, u32>) -> bool {
    for _ in 0..64 {
        match parents.get(&pid) {
            Some(&parent) if parent == root => return true,
            Some(&parent) if parent > 1 => pid = parent,
            _ => return false,
        }
    }
    false
}

/// The fourth field of `/proc/<pid>/stat`, after the parenthesised name (which may hold spaces).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

fn rss_of(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
