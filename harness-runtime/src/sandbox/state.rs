//! Whether agents run confined, and the progress line that says so.

use std::sync::OnceLock;

use super::kernel::{self, Unavailable};
use crate::settings::MissingPrerequisite;

/// The ABI from which TCP connect can be restricted per port.
const NET_ABI: u32 = 4;
/// The ABI from which signals to processes outside the sandbox are refused.
const SIGNAL_ABI: u32 = 6;

/// How the agents of this run are started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Sandbox {
    /// Confined by Landlock; the kernel offers this ABI.
    On {
        /// The kernel's Landlock ABI.
        abi: u32,
    },
    /// Unconfined; the progress line says why (a warning when nobody asked for it).
    Off {
        /// `sandbox: off …`.
        line: String,
    },
}

impl Sandbox {
    /// The progress line of an agent: `sandbox: landlock ABI 7`, with what this ABI leaves out
    /// and `tcp_open` (why TCP connect is not restricted for this agent), or why it is off.
    pub(crate) fn line(&self, tcp_open: Option<&str>) -> String {
        let abi = match self {
            Sandbox::Off { line } => return line.clone(),
            Sandbox::On { abi } => *abi,
        };
        let mut line = format!("sandbox: landlock ABI {abi}");
        if abi < NET_ABI {
            line.push_str(&format!(
                " (tcp connect and signals not restricted: they need ABI {NET_ABI} and \
                 {SIGNAL_ABI})"
            ));
        } else if abi < SIGNAL_ABI {
            line.push_str(&format!(
                " (signals to processes outside the sandbox not refused: that needs ABI \
                 {SIGNAL_ABI})"
            ));
        }
        if let Some(why) = tcp_open.filter(|_| abi >= NET_ABI) {
            line.push_str(&format!("; tcp connect not restricted: {why}"));
        }
        line
    }

    /// Whether agents are confined.
    pub(crate) fn is_on(&self) -> bool {
        matches!(self, Sandbox::On { .. })
    }
}

/// The sandbox of this process's agents: `LIVE_SANDBOX` (on unless `0`) and the kernel (asked
/// once). Landlock is a prerequisite like any other: where it is missing the agent runs
/// unconfined with a warning, and under `CI` or `LIVE_STRICT=1` the missing sandbox is the error.
pub(crate) fn current() -> Result<Sandbox, String> {
    static KERNEL: OnceLock<Result<u32, Unavailable>> = OnceLock::new();
    // An invalid value was reported by the runner before any trial; here it counts as on.
    let wanted = crate::settings::sandbox_setting().unwrap_or(true);
    decide(
        wanted,
        *KERNEL.get_or_init(kernel::abi),
        MissingPrerequisite::decide,
    )
}

/// [`current`] with its inputs made explicit: `missing` is the rule for a missing prerequisite.
fn decide(
    wanted: bool,
    kernel: Result<u32, Unavailable>,
    missing: impl FnOnce(String) -> MissingPrerequisite,
) -> Result<Sandbox, String> {
    let var = crate::settings::SANDBOX;
    if !wanted {
        return Ok(Sandbox::Off {
            line: format!("sandbox: off ({var}=0)"),
        });
    }
    let why = match kernel {
        Ok(abi) => return Ok(Sandbox::On { abi }),
        Err(why) => why,
    };
    match missing(format!(
        "the agent's sandbox is unavailable: {why}; run where Landlock is enabled (Linux 5.13 or \
         newer, `landlock` among the active LSMs), or set {var}=0 to run agents unconfined"
    )) {
        MissingPrerequisite::Skip(_) => Ok(Sandbox::Off {
            line: format!(
                "sandbox: off — warning: {why}, so the agent runs unconfined (under CI or \
                 LIVE_STRICT=1 this fails; {var}=0 turns the sandbox off without this warning)"
            ),
        }),
        MissingPrerequisite::Fail(message) => Err(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lax(reason: String) -> MissingPrerequisite {
        MissingPrerequisite::under(reason, None)
    }

    fn under_ci(reason: String) -> MissingPrerequisite {
        MissingPrerequisite::under(reason, Some("CI=true".into()))
    }

    #[test]
    fn on_by_default_where_the_kernel_has_landlock() {
        let on = decide(true, Ok(7), lax).unwrap();
        assert_eq!(on, Sandbox::On { abi: 7 });
        assert_eq!(on.line(None), "sandbox: landlock ABI 7");
        assert_eq!(decide(true, Ok(7), under_ci), Ok(on));
    }

    #[test]
    fn the_variable_turns_it_off_without_a_warning_even_when_strict() {
        for kernel in [Ok(7), Err(Unavailable::Absent)] {
            let off = decide(false, kernel, under_ci).unwrap();
            assert!(!off.is_on());
            assert_eq!(off.line(None), "sandbox: off (LIVE_SANDBOX=0)");
        }
    }

    /// No Landlock: a one-line warning that says why and what to do, or under CI or
    /// LIVE_STRICT=1 the failure, saying what to do and what made it one.
    #[test]
    fn unavailable_warns_or_fails_under_ci_or_strict() {
        for why in [
            Unavailable::Disabled,
            Unavailable::Absent,
            Unavailable::OtherOs,
        ] {
            let off = decide(true, Err(why), lax).unwrap();
            let line = off.line(None);
            assert!(line.starts_with("sandbox: off — warning: "), "{line}");
            assert!(line.contains(&why.to_string()), "{line}");
            assert!(
                line.contains("under CI or LIVE_STRICT=1 this fails"),
                "{line}"
            );
            assert!(line.contains("LIVE_SANDBOX=0"), "{line}");
            assert!(!line.contains('\n'));
            let failure = decide(true, Err(why), under_ci).unwrap_err();
            assert!(
                failure.starts_with(&format!("the agent's sandbox is unavailable: {why}; ")),
                "{failure}"
            );
            assert!(failure.contains("LIVE_SANDBOX=0"), "{failure}");
            assert!(
                failure.ends_with("(CI=true makes a missing prerequisite a failure)"),
                "{failure}"
            );
        }
    }

    /// An older kernel confines what its ABI can, and the line says what is left out.
    #[test]
    fn the_line_names_what_an_older_abi_leaves_out() {
        let line = |abi, tcp| Sandbox::On { abi }.line(tcp);
        assert!(line(3, None).contains("tcp connect and signals not restricted"));
        assert!(line(5, None).contains("signals to processes outside"));
        assert_eq!(
            line(7, Some("a shared server")),
            "sandbox: landlock ABI 7; tcp connect not restricted: a shared server"
        );
        // Below ABI 4 the reason is already given.
        assert!(!line(3, Some("a shared server")).contains("shared"));
    }

    /// This machine's kernel: the probe answers without confining the test process.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_probe_confines_nothing() {
        let _ = kernel::abi();
        std::fs::metadata(std::env::temp_dir()).unwrap();
        let probe = std::env::temp_dir().join(format!("live-probe-{}", std::process::id()));
        std::fs::write(&probe, "x").unwrap();
        std::fs::remove_file(probe).unwrap();
    }
}
