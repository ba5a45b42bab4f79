//! Owned child processes: own process group, die with the runner, terminate → kill → reap.
