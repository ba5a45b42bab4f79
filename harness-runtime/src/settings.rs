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

/// The ceiling multiplier; 1.0 when unset. Errors name the variable, the problem and a valid
/// value. Like `requires`, a padded value is refused rather than trimmed: a stray newline from a
/// CI file is a mistake worth seeing, and every variable of the harness follows one rule.
pub(crate) fn timeout_scale() -> Result<f64, String> {
    parse_timeout_scale(std::env::var_os(TIMEOUT_SCALE))
}

/// [`timeout_scale`] with the value made explicit.
fn parse_timeout_scale(raw: Option<std::ffi::OsString>) -> Result<f64, String> {
    const EXAMPLE: &str = "a positive number such as 2 or 1.5";
    let Some(raw) = raw else {
        return Ok(1.0);
    };
    let text = raw
        .to_str()
        .ok_or_else(|| format!("{TIMEOUT_SCALE} is not valid UTF-8: set it to {EXAMPLE}"))?;
    if text.trim().is_empty() {
        return Err(format!(
            "{TIMEOUT_SCALE} is empty: unset it, or set it to {EXAMPLE}"
        ));
    }
    if text.trim() != text {
        return Err(format!(
            "{TIMEOUT_SCALE} has leading or trailing whitespace: set it to {EXAMPLE}, nothing around it"
        ));
    }
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
        _ => Err(format!("{TIMEOUT_SCALE} must be {EXAMPLE}")),
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

#[cfg(test)]
mod tests {
    use super::parse_timeout_scale;

    fn parse(value: &str) -> Result<f64, String> {
        parse_timeout_scale(Some(value.into()))
    }

    #[test]
    fn valid_scales_parse_and_unset_is_one() {
        assert_eq!(parse_timeout_scale(None), Ok(1.0));
        assert_eq!(parse("2"), Ok(2.0));
        assert_eq!(parse("1.5"), Ok(1.5));
    }

    #[test]
    fn each_bad_scale_says_what_is_wrong() {
        let message = |value: &str| parse(value).unwrap_err();
        assert!(message("").contains("LIVE_TIMEOUT_SCALE is empty"));
        assert!(message("  ").contains("LIVE_TIMEOUT_SCALE is empty"));
        assert!(message(" 2 ").contains("leading or trailing whitespace"));
        for bad in ["abc", "0", "-1", "inf", "NaN"] {
            assert!(
                message(bad).contains("must be a positive number such as 2 or 1.5"),
                "{bad}"
            );
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_non_unicode_scale_is_named() {
        use std::os::unix::ffi::OsStringExt;
        let raw = std::ffi::OsString::from_vec(vec![b'2', 0xff]);
        assert!(
            parse_timeout_scale(Some(raw))
                .unwrap_err()
                .contains("LIVE_TIMEOUT_SCALE is not valid UTF-8")
        );
    }
}
