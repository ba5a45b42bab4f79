//! The runner's knobs, read from the environment once per call site.
//!
//! Invalid values are reported, never silently replaced: a typo in `LIVE_TIMEOUT_SCALE` would
//! otherwise turn into a confusing timeout much later.

use std::time::Duration;

/// `LIVE_TIMEOUT_SCALE`: multiplies every ceiling (scenario, readiness, turn, stream watchdog).
pub(crate) const TIMEOUT_SCALE: &str = "LIVE_TIMEOUT_SCALE";
/// `LIVE_STRICT=1`: a missing requirement fails the scenario instead of skipping it.
pub(crate) const STRICT: &str = "LIVE_STRICT";
/// `LIVE_KEEP=1`: keep every scenario root, also after a pass.
pub(crate) const KEEP: &str = "LIVE_KEEP";
/// `LIVE_ISOLATION=server|shared`: whether scenarios that allow it share OpenCode servers.
pub(crate) const ISOLATION: &str = "LIVE_ISOLATION";

/// The suite's isolation level; `Server` when unset. Errors name the variable and the values.
pub(crate) fn isolation() -> Result<crate::Isolation, String> {
    let expected = || format!("{ISOLATION} must be `server` (the default) or `shared`");
    match std::env::var_os(ISOLATION) {
        None => Ok(crate::Isolation::Server),
        Some(raw) => match raw.to_str().map(str::trim) {
            Some("server") | Some("") => Ok(crate::Isolation::Server),
            Some("shared") => Ok(crate::Isolation::Shared),
            Some(_) => Err(expected()),
            None => Err(format!("{ISOLATION} is not valid UTF-8; {}", expected())),
        },
    }
}

/// The ceiling multiplier; 1.0 when unset. Errors name the variable and the problem.
pub(crate) fn timeout_scale() -> Result<f64, String> {
    match std::env::var_os(TIMEOUT_SCALE) {
        None => Ok(1.0),
        Some(raw) => {
            let text = raw
                .to_str()
                .ok_or_else(|| format!("{TIMEOUT_SCALE} is not valid UTF-8"))?;
            let value: f64 = text.trim().parse().map_err(|_| {
                format!("{TIMEOUT_SCALE} must be a positive number such as 2 or 1.5")
            })?;
            if value.is_finite() && value > 0.0 {
                Ok(value)
            } else {
                Err(format!(
                    "{TIMEOUT_SCALE} must be a positive number such as 2 or 1.5"
                ))
            }
        }
    }
}

/// Scales a ceiling by `LIVE_TIMEOUT_SCALE` (an invalid value counts as 1; the runner reports it).
pub fn scaled(ceiling: Duration) -> Duration {
    ceiling.mul_f64(timeout_scale().unwrap_or(1.0))
}

fn flag(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref().map(str::trim),
        Ok("1") | Ok("true") | Ok("yes")
    )
}

/// Whether `LIVE_STRICT` asks for failures instead of skips.
pub(crate) fn strict() -> bool {
    flag(STRICT)
}

/// Whether `LIVE_KEEP` asks to keep every root.
pub(crate) fn keep_roots() -> bool {
    flag(KEEP)
}
