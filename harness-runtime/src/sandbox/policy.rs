//! What a confined agent may touch: paths to read, paths to write, ports to connect to.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// System directories ordinary tools read and execute from: the shell, coreutils, git, the
/// dynamic linker and libraries, configuration (`/etc`), and the kernel's views (`/proc`,
/// `/sys`). Not `/home`, `/root`, `/tmp`, `/var`, `/run`, `/mnt`, `/srv` or anything else under
/// `/`: a checkout or a developer's files live there.
const SYSTEM_READ: &[&str] = &[
    "/bin",
    "/sbin",
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/sys",
    "/nix/store",
];

/// Device files every process may read and write. Not `/dev` as a whole: a disk's device
/// file reads the whole disk where the runner is root.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Files of `/etc` that are often symlinks to elsewhere (`/run/systemd/resolve/…`): their
/// targets are readable too, since a rule holds for the file it resolves to.
const SYMLINKED_CONFIG: &[&str] = &["/etc/resolv.conf", "/etc/localtime", "/etc/hosts"];

/// What Landlock allows a confined process tree. Everything a rule does not allow is denied:
/// reading, listing, executing, writing, creating, removing and renaming files anywhere else;
/// TCP connect to other ports (when `connect` is set and the kernel's ABI is 4 or newer);
/// signals to processes outside the tree (ABI 6 or newer).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Policy {
    /// Read, list and execute beneath each (a file: read and execute it).
    pub(crate) read: Vec<PathBuf>,
    /// Every right beneath each (a file: read, write and truncate it).
    pub(crate) write: Vec<PathBuf>,
    /// TCP connect only to these ports, on any address; `None`: not restricted.
    pub(crate) connect: Option<Vec<u16>>,
}

impl Policy {
    /// The system's part of every policy: [`SYSTEM_READ`], the targets of [`SYMLINKED_CONFIG`]
    /// and the [`DEVICES`]; TCP connect restricted to no port yet.
    pub(crate) fn system() -> Self {
        let mut policy = Policy {
            read: SYSTEM_READ.iter().map(PathBuf::from).collect(),
            write: DEVICES.iter().map(PathBuf::from).collect(),
            connect: Some(Vec::new()),
        };
        for file in SYMLINKED_CONFIG {
            if let Ok(target) = Path::new(file).canonicalize() {
                policy.allow_read(target);
            }
        }
        policy
    }

    /// Allows reading, listing and executing beneath `path`.
    pub(crate) fn allow_read(&mut self, path: impl Into<PathBuf>) {
        push_new(&mut self.read, path.into());
    }

    /// Allows every file right beneath `path`.
    pub(crate) fn allow_write(&mut self, path: impl Into<PathBuf>) {
        push_new(&mut self.write, path.into());
    }

    /// Allows TCP connect to `port` (nothing changes when connect is not restricted).
    pub(crate) fn allow_connect(&mut self, port: u16) {
        if let Some(ports) = &mut self.connect {
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
    }

    /// Leaves TCP connect unrestricted.
    pub(crate) fn connect_anywhere(&mut self) {
        self.connect = None;
    }
}

fn push_new(paths: &mut Vec<PathBuf>, path: PathBuf) {
    if !paths.contains(&path) {
        paths.push(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_part_reads_system_dirs_and_writes_only_device_files() {
        let policy = Policy::system();
        assert!(policy.read.contains(&PathBuf::from("/usr")));
        assert!(policy.read.contains(&PathBuf::from("/etc")));
        for private in ["/", "/home", "/root", "/tmp", "/var", "/dev"] {
            assert!(!policy.read.contains(&PathBuf::from(private)), "{private}");
            assert!(!policy.write.contains(&PathBuf::from(private)), "{private}");
        }
        assert!(policy.write.iter().all(|p| p.starts_with("/dev/")));
        assert_eq!(policy.connect, Some(Vec::new()));
    }

    #[test]
    fn ports_are_added_once_and_not_at_all_when_unrestricted() {
        let mut policy = Policy::system();
        policy.allow_connect(8080);
        policy.allow_connect(8080);
        assert_eq!(policy.connect, Some(vec![8080]));
        policy.connect_anywhere();
        policy.allow_connect(9090);
        assert_eq!(policy.connect, None);
    }
}
