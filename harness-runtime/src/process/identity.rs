//! A process identity that survives pid reuse: its pid and its start time (clock ticks since
//! boot, field 22 of `/proc/<pid>/stat`). Linux only; elsewhere no process is known alive.

/// `(pid, start time)`.
pub(crate) type Identity = (u32, u64);

/// The identity of `pid` while it runs (a zombie has ended: `None`).
pub(crate) fn identify(pid: u32) -> Option<Identity> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields are counted after its last `)`.
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3 (state); the start time is field 22.
    if fields.first()?.starts_with('Z') {
        return None;
    }
    Some((pid, fields.get(19)?.parse().ok()?))
}

/// Whether the process `identity` names still runs (not another one that got its pid).
pub(crate) fn is_alive(identity: Identity) -> bool {
    identify(identity.0) == Some(identity)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_changed_start_time_is_another_process() {
        let me = identify(std::process::id()).unwrap();
        assert!(is_alive(me));
        assert!(!is_alive((me.0, me.1 + 1)));
        assert!(identify(u32::MAX).is_none());
    }
}
