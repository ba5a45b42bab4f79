//! Internal variables: set by the harness on the processes it starts (a helper role, the fixture
//! agent's knobs), read by those processes through the same rule as the user's settings.

use std::path::PathBuf;
use std::time::Duration;

use super::names;
use super::rule::{FLAG_VALUES, InvalidSetting, Setting, flag, path, raw, verbatim};

/// A helper role of a re-executed binary (`HARNESS_RUNTIME_ROLE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// The fixture agent (`fixture::run_agent`).
    FixtureAgent,
    /// The per-runner reaper (`process::run_reaper`).
    Reaper,
    /// The sandbox launcher (`sandbox::run_launcher`): confines itself, then runs the agent.
    SandboxLauncher,
    /// The owner of a nextest run's pool of shared servers (`opencode::run_pool_owner`).
    Pool,
    /// The agent command a product that is an ACP client runs: its stdio forwarded to the
    /// scenario's ACP agent (`acp::run_forward`).
    AcpForward,
}

impl Role {
    /// The variable's value for this role.
    pub(crate) const fn value(self) -> &'static str {
        match self {
            Role::FixtureAgent => "fixture-agent",
            Role::Reaper => "reaper",
            Role::SandboxLauncher => "sandbox",
            Role::Pool => "pool",
            Role::AcpForward => "acp-forward",
        }
    }
}

const ROLE: Setting<Role> = Setting {
    name: names::ROLE,
    expected: "`fixture-agent`, `reaper`, `sandbox`, `pool` or `acp-forward` (the harness sets it \
               on its helper processes; unset it to run the scenarios)",
    parse: |text| {
        [
            Role::FixtureAgent,
            Role::Reaper,
            Role::SandboxLauncher,
            Role::Pool,
            Role::AcpForward,
        ]
        .into_iter()
        .find(|role| role.value() == text)
    },
};

/// The helper role this process was started in; `None` for the runner itself.
pub(crate) fn role() -> Result<Option<Role>, InvalidSetting> {
    ROLE.read()
}

/// Whether this process was started in a helper role, valid or not: such a process must not
/// start helpers of its own (they would recurse).
pub(crate) fn in_helper_role() -> bool {
    raw(names::ROLE).is_some()
}

/// This process's variables an agent must not inherit, because they would break its isolation:
/// the user's own OpenCode settings (`OPENCODE_*`), and this harness's roles, owner marks and
/// sandbox launch (the fixture's launch spec sets its role again explicitly).
pub(crate) fn not_for_agents() -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| {
            name.starts_with("OPENCODE_")
                || [names::ROLE, names::OWNER, names::SANDBOX_LAUNCH].contains(&name.as_str())
        })
        .collect()
}

/// The names of this process's variables that `matches` picks: those an agent must not inherit
/// beyond [`not_for_agents`] (a caller's own keys and endpoints for that agent).
pub(crate) fn inherited_names(matches: impl Fn(&str) -> bool) -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|name| matches(name))
        .collect()
}

/// `LIVE_POOL_RUNNER` as the harness set it for a pool's owner (`<pid>:<start time>`); `None`
/// when unset or not UTF-8.
pub(crate) fn pool_runner() -> Option<String> {
    raw(names::POOL_RUNNER)?.into_string().ok()
}

/// The owner mark this process carries (`LIVE_HARNESS_OWNER`), empty when it carries none.
pub(crate) fn owner_mark() -> String {
    raw(names::OWNER)
        .and_then(|mark| mark.into_string().ok())
        .unwrap_or_default()
}

const SANDBOX_LAUNCH: Setting<String> = Setting {
    name: names::SANDBOX_LAUNCH,
    expected: "what the sandbox launcher runs, as JSON (the harness sets it)",
    parse: verbatim,
};

/// The launch the sandbox launcher confines and runs, as the harness wrote it; `None` when unset.
pub(crate) fn sandbox_launch() -> Result<Option<String>, InvalidSetting> {
    SANDBOX_LAUNCH.read()
}

/// `LIVE_ACP_FORWARD`: the loopback address an `acp-forward` helper connects to; `None` when
/// unset or not UTF-8.
pub(crate) fn acp_forward() -> Option<String> {
    raw(names::ACP_FORWARD)?.into_string().ok()
}

/// The real server's heartbeat period, the fixture agent's default.
const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);

const HEARTBEAT_MS: Setting<Duration> = Setting {
    name: names::FIXTURE_HEARTBEAT_MS,
    expected: "a positive number of milliseconds such as 200",
    // Zero would make a timer that never waits.
    parse: |text| {
        text.parse()
            .ok()
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
    },
};

const HOME: Setting<PathBuf> = Setting {
    name: names::HOME,
    expected: "the agent's home directory (provisioning sets it)",
    parse: path,
};

const RUN_ID: Setting<String> = Setting {
    name: names::FIXTURE_RUN_ID,
    expected: "a run id such as run42",
    parse: verbatim,
};

const DECLARED_AS: Setting<String> = Setting {
    name: names::FIXTURE_AS,
    expected: "a role name such as planner",
    parse: verbatim,
};

const WAIT_STDIN: Setting<bool> = Setting {
    name: names::FIXTURE_WAIT_STDIN,
    expected: FLAG_VALUES,
    parse: flag,
};

const REPLAY_EVIDENCE: Setting<PathBuf> = Setting {
    name: names::FIXTURE_REPLAY_EVIDENCE,
    expected: "the path of a file to write each prompt_async request to",
    parse: path,
};

/// What the fixture agent reads from its environment: read once, at its start, so a bad value
/// stops it there with a message instead of being replaced by a default.
#[derive(Clone, Debug)]
pub(crate) struct FixtureAgentEnv {
    /// `HOME`: its control files, sessions and launch records.
    pub(crate) home: Option<PathBuf>,
    /// `LIVE_FIXTURE_HEARTBEAT_MS`: the heartbeat period (10 s, as the real server, when unset).
    pub(crate) heartbeat: Duration,
    /// `LIVE_FIXTURE_RUN_ID`: the run id recorded per launch (the session id when unset).
    pub(crate) run_id: Option<String>,
    /// `LIVE_FIXTURE_AS`: what the launch declared itself as.
    pub(crate) declared_as: Option<String>,
    /// `LIVE_FIXTURE_WAIT_STDIN`: in `run` mode, wait for a line on stdin before exiting, so a
    /// harness can observe a running launch.
    pub(crate) wait_stdin: bool,
    /// `LIVE_FIXTURE_TEST_REPLAY_EVIDENCE`: where each `prompt_async` request is written, so a
    /// test can read what a client sent.
    pub(crate) replay_evidence: Option<PathBuf>,
    /// The `model` (`provider/model`) of `OPENCODE_CONFIG_CONTENT`, the config provisioning
    /// gives every agent: a prompt that names no model runs on it, as on real OpenCode.
    pub(crate) config_model: Option<(String, String)>,
}

/// `provider/model` of a config's `model`; a config that is not JSON or names none has none
/// (read as leniently as real OpenCode reads it, not as one of the harness's settings).
fn config_model(config: Option<&str>) -> Option<(String, String)> {
    let config: serde_json::Value = serde_json::from_str(config?).ok()?;
    let (provider, model) = config["model"].as_str()?.split_once('/')?;
    Some((provider.to_string(), model.to_string()))
}

impl FixtureAgentEnv {
    /// Reads every variable of the fixture agent; the first invalid one is the error.
    pub(crate) fn read() -> Result<Self, InvalidSetting> {
        Ok(Self {
            home: HOME.read()?,
            heartbeat: HEARTBEAT_MS.read()?.unwrap_or(DEFAULT_HEARTBEAT),
            run_id: RUN_ID.read()?,
            declared_as: DECLARED_AS.read()?,
            wait_stdin: WAIT_STDIN.read()?.unwrap_or(false),
            replay_evidence: REPLAY_EVIDENCE.read()?,
            config_model: config_model(std::env::var(names::CONFIG_CONTENT).ok().as_deref()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_are_the_five_helpers() {
        assert_eq!(ROLE.test_read("reaper"), Ok(Some(Role::Reaper)));
        assert_eq!(ROLE.test_read("acp-forward"), Ok(Some(Role::AcpForward)));
        assert_eq!(ROLE.test_read("sandbox"), Ok(Some(Role::SandboxLauncher)));
        assert_eq!(ROLE.test_read("pool"), Ok(Some(Role::Pool)));
        assert_eq!(
            ROLE.test_read("fixture-agent"),
            Ok(Some(Role::FixtureAgent))
        );
        let unknown = ROLE.test_read("wizard").unwrap_err();
        assert!(
            unknown.starts_with(
                "HARNESS_RUNTIME_ROLE must be `fixture-agent`, `reaper`, `sandbox`, `pool` or \
                 `acp-forward`"
            ),
            "{unknown}"
        );
        assert!(
            unknown.contains("unset it to run the scenarios"),
            "{unknown}"
        );
    }

    /// A bad heartbeat is named, never replaced by the default; `0` would be a timer that never
    /// waits.
    #[test]
    fn a_bad_heartbeat_is_an_error_not_the_default() {
        assert_eq!(
            HEARTBEAT_MS.test_read("200"),
            Ok(Some(Duration::from_millis(200)))
        );
        for bad in ["0", "fast", "-5", "1.5"] {
            assert_eq!(
                HEARTBEAT_MS.test_read(bad).unwrap_err(),
                "LIVE_FIXTURE_HEARTBEAT_MS must be a positive number of milliseconds such as 200",
                "{bad}"
            );
        }
        assert!(
            HEARTBEAT_MS
                .test_read("200 ")
                .unwrap_err()
                .contains("has leading or trailing whitespace")
        );
    }

    #[test]
    fn the_fixture_launch_variables_follow_the_rule() {
        assert_eq!(RUN_ID.test_read("run42"), Ok(Some("run42".to_string())));
        assert_eq!(DECLARED_AS.test_read("planner"), Ok(Some("planner".into())));
        assert_eq!(WAIT_STDIN.test_read("1"), Ok(Some(true)));
        assert!(
            WAIT_STDIN
                .test_read("sure")
                .unwrap_err()
                .starts_with("LIVE_FIXTURE_WAIT_STDIN must be")
        );
        for setting in [&RUN_ID, &DECLARED_AS] {
            assert!(setting.test_read("").unwrap_err().contains("is empty"));
            assert!(setting.test_read("x\n").unwrap_err().contains("whitespace"));
        }
        assert!(
            REPLAY_EVIDENCE
                .test_read("")
                .unwrap_err()
                .starts_with("LIVE_FIXTURE_TEST_REPLAY_EVIDENCE is empty")
        );
        assert!(
            HOME.test_read(" /home/a")
                .unwrap_err()
                .starts_with("HOME has leading")
        );
    }
}
