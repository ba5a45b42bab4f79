//! Compile-time parsing of `timeout = "…"`: humantime-like `<int><unit>` groups.

/// Parses `"90s"`, `"1m30s"`, `"1h 5m"`, `"500ms"` into milliseconds.
///
/// Units: `ms`, `s`, `m`, `h`. The total must be positive and fit in a `u64`.
pub(crate) fn parse_millis(text: &str) -> Result<u64, String> {
    const HINT: &str = "write a duration such as \"90s\", \"500ms\", \"2m\" or \"1m30s\"";
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("empty duration: {HINT}"));
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        rest = rest.trim_start();
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!("expected a number in `{text}`: {HINT}"));
        }
        let number: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("number too large in `{text}`"))?;
        rest = &rest[digits..];
        let unit_len = rest.chars().take_while(char::is_ascii_alphabetic).count();
        let unit = &rest[..unit_len];
        let factor = match unit {
            "ms" => 1,
            "s" => 1_000,
            "m" => 60_000,
            "h" => 3_600_000,
            "" => return Err(format!("missing unit after `{number}` in `{text}`: {HINT}")),
            other => {
                return Err(format!(
                    "unknown unit `{other}` in `{text}`: use ms, s, m or h"
                ));
            }
        };
        total = number
            .checked_mul(factor)
            .and_then(|part| total.checked_add(part))
            .ok_or_else(|| format!("duration `{text}` is too large"))?;
        rest = &rest[unit_len..];
    }
    if total == 0 {
        return Err(format!("the duration must be longer than zero: {HINT}"));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::parse_millis;

    #[test]
    fn accepts_units_and_groups() {
        assert_eq!(parse_millis("90s"), Ok(90_000));
        assert_eq!(parse_millis("500ms"), Ok(500));
        assert_eq!(parse_millis("2m"), Ok(120_000));
        assert_eq!(parse_millis("1h"), Ok(3_600_000));
        assert_eq!(parse_millis("1m30s"), Ok(90_000));
        assert_eq!(parse_millis("1m 30s"), Ok(90_000));
    }

    #[test]
    fn rejects_malformed() {
        for bad in [
            "",
            "90",
            "s",
            "10x",
            "1.5s",
            "0s",
            "-1s",
            "99999999999999999999s",
        ] {
            assert!(parse_millis(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
