//! The one rule for a missing prerequisite, something the machine must have installed for a test
//! or an agent (OpenCode, the workspace's node packages, cargo-nextest, Chromium, Landlock): it is
//! skipped with a reason that names what to install, and under `CI` (set to anything but empty,
//! `0` or `false`) or `LIVE_STRICT=1` it is a failure saying the same, so a CI run never passes
//! by testing less.
//!
//! A scenario's missing variables (`requires`, a real model's) are not prerequisites: CI jobs
//! often lack secrets on purpose, so those fail under `LIVE_STRICT=1` alone.

use super::foreign::ci;
use super::names;
use super::user::strict_setting;

/// What a missing prerequisite becomes in this process's environment: skipped, or a failure.
/// Two outcomes, and only two: a caller matches both.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissingPrerequisite {
    /// Skipped, with the reason: what is missing and what to install.
    Skip(String),
    /// Failed, with the message: the reason, and the setting that made it a failure.
    Fail(String),
}

impl MissingPrerequisite {
    /// What a prerequisite missing for `reason` (what is missing, naming what to install)
    /// becomes here: skipped, or under `CI` or `LIVE_STRICT=1` a failure.
    pub fn decide(reason: impl Into<String>) -> Self {
        Self::under(reason.into(), strictness())
    }

    /// [`decide`](Self::decide) with what makes it a failure (`CI=true`, …) made explicit.
    pub(crate) fn under(reason: String, strict_by: Option<String>) -> Self {
        match strict_by {
            None => MissingPrerequisite::Skip(reason),
            Some(by) => MissingPrerequisite::Fail(format!(
                "{reason} ({by} makes a missing prerequisite a failure)"
            )),
        }
    }
}

/// What makes a missing prerequisite a failure here, as messages name it (`LIVE_STRICT=1`,
/// `CI=true`); `None` when it is skipped. An invalid `LIVE_STRICT` counts as strict and is named
/// with its problem: a typo must not run lax.
fn strictness() -> Option<String> {
    match strict_setting() {
        Ok(true) => Some(format!("{}=1", names::STRICT)),
        Ok(false) => ci().map(|value| format!("{}={value}", names::CI)),
        Err(invalid) => Some(format!("an invalid {}: {invalid}", names::STRICT)),
    }
}

/// For a unit test that needs a prerequisite, which `missing` says is missing (libtest's own
/// harness cannot skip at run time): whether to run it. Missing, it says `not run: …` on stderr
/// and the test returns (reported `ok`); under `CI` or `LIVE_STRICT=1` the test fails instead.
#[cfg(test)]
pub(crate) fn unit_test_runs(missing: Option<String>) -> bool {
    match missing.map(MissingPrerequisite::decide) {
        None => true,
        Some(MissingPrerequisite::Skip(reason)) => {
            eprintln!("not run: {reason}");
            false
        }
        Some(MissingPrerequisite::Fail(message)) => panic!("{message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lax_skips_with_the_reason_and_strict_fails_naming_why() {
        let reason = "opencode not found: run `npm ci`";
        assert_eq!(
            MissingPrerequisite::under(reason.into(), None),
            MissingPrerequisite::Skip(reason.into())
        );
        assert_eq!(
            MissingPrerequisite::under(reason.into(), Some("CI=true".into())),
            MissingPrerequisite::Fail(
                "opencode not found: run `npm ci` (CI=true makes a missing prerequisite a failure)"
                    .into()
            )
        );
    }
}
