//! The kernel's side: which Landlock ABI it offers, and confining this process to a [`Policy`].

use super::{Policy, SandboxError};

/// Why the kernel cannot confine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unavailable {
    /// Built in, but not in the active LSMs.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Disabled,
    /// Not built into this kernel.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    Absent,
    /// Not Linux.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    OtherOs,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unavailable::Disabled => {
                "this kernel has Landlock but does not enable it (add `landlock` to the `lsm=` \
                 boot parameter)"
            }
            Unavailable::Absent => "this kernel was built without Landlock",
            Unavailable::OtherOs => "Landlock is Linux-only",
        })
    }
}

#[cfg(target_os = "linux")]
pub(crate) use linux::{abi, restrict};

#[cfg(target_os = "linux")]
mod linux {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, LandlockStatus, NetPort, PathBeneath, PathFd,
        RestrictSelf, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope,
    };

    use super::{Policy, SandboxError, Unavailable};

    /// The newest ABI whose rights the sandbox asks for: every right up to it was tried with
    /// real OpenCode. Rights of newer ABIs (pathname UNIX sockets, UDP) are not asked for, so a
    /// newer kernel denies nothing nobody tried.
    const VETTED: ABI = ABI::V6;

    /// The kernel's Landlock ABI, asked without restricting anything (no flags, no
    /// `no_new_privs`: the crate then makes no restricting call).
    pub(crate) fn abi() -> Result<u32, Unavailable> {
        let status = RestrictSelf::default()
            .no_new_privs(false)
            .apply()
            .map(|status| status.landlock);
        match status {
            Ok(LandlockStatus::Available {
                effective_abi,
                kernel_abi,
            }) => Ok(kernel_abi
                .and_then(|v| u32::try_from(v).ok())
                .or_else(|| effective_abi.to_string().parse().ok())
                .unwrap_or(1)),
            Ok(LandlockStatus::NotEnabled) => Err(Unavailable::Disabled),
            Ok(_) | Err(_) => Err(Unavailable::Absent),
        }
    }

    /// Confines this thread, and every process it `exec`s or starts from now on, to `policy`.
    /// Best effort per ABI: rights the kernel does not know are left out (the caller says
    /// which, from [`abi`]); nothing enforced at all is an error. A path that does not exist
    /// grants nothing.
    pub(crate) fn restrict(policy: &Policy) -> Result<(), SandboxError> {
        let all = AccessFs::from_all(VETTED);
        let read = AccessFs::from_read(VETTED);
        let file = AccessFs::from_file(VETTED);
        let mut ruleset = Ruleset::default().handle_access(all)?;
        if policy.connect.is_some() {
            ruleset = ruleset.handle_access(AccessNet::ConnectTcp)?;
        }
        let mut created = ruleset.scope(Scope::from_all(VETTED))?.create()?;
        for (paths, access) in [(&policy.read, read), (&policy.write, all)] {
            for path in paths {
                let (Ok(fd), Ok(meta)) = (PathFd::new(path), std::fs::metadata(path)) else {
                    continue;
                };
                // A file takes only file rights (listing or creating beneath it means nothing).
                let access = if meta.is_dir() { access } else { access & file };
                created = created.add_rule(PathBeneath::new(fd, access))?;
            }
        }
        for port in policy.connect.iter().flatten() {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
        let status = created.restrict_self()?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(SandboxError::NotEnforced);
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn abi() -> Result<u32, Unavailable> {
    Err(Unavailable::OtherOs)
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn restrict(_policy: &Policy) -> Result<(), SandboxError> {
    Err(SandboxError::NotLinux)
}
