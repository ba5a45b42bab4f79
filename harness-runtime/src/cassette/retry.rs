//! When the relay asks the upstream again: a 429 or 5xx answer (rate limited, Anthropic's 529
//! overloaded, failing) is retried after the wait the upstream names (`retry-after-ms`,
//! `Retry-After` in seconds or as an HTTP date, Anthropic's `anthropic-ratelimit-*-reset` of a
//! spent limit, Gemini's `RetryInfo.retryDelay` in the error body), else after a doubling backoff; at most [`MAX_RETRIES`] times
//! per request and [`CEILING`] of waiting in all (scaled by `LIVE_TIMEOUT_SCALE`). A wait that
//! does not fit is not started: the answer goes to OpenCode at once.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

/// Retries of one request at most.
pub(super) const MAX_RETRIES: u32 = 4;
/// The total wait of one request's retries, before scaling.
const CEILING: Duration = Duration::from_secs(60);
/// The first wait when the upstream names none; each next one doubles.
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// Whether an answer of `status` is worth asking again: rate limited or a server's failure.
pub(super) fn retryable(status: u16) -> bool {
    status == 429 || (500..=599).contains(&status)
}

/// One request's retries so far.
#[derive(Debug)]
pub(super) struct Retries {
    /// Retries done.
    pub(super) done: u32,
    /// Time spent waiting for them.
    pub(super) waited: Duration,
    ceiling: Duration,
}

impl Retries {
    /// No retry yet; the ceiling scaled by `LIVE_TIMEOUT_SCALE`.
    pub(super) fn new() -> Self {
        Self::with_ceiling(crate::settings::scaled(CEILING))
    }

    fn with_ceiling(ceiling: Duration) -> Self {
        Retries {
            done: 0,
            waited: Duration::ZERO,
            ceiling,
        }
    }

    /// How long to wait before the next retry after an answer with `headers` and `body`,
    /// counting it; `None` when the retries are spent or the wait would pass the ceiling.
    pub(super) fn next(
        &mut self,
        headers: &HeaderMap,
        body: &[u8],
        now: SystemTime,
    ) -> Option<Duration> {
        if self.done >= MAX_RETRIES {
            return None;
        }
        let wait = asked_wait(headers, body, now).unwrap_or_else(|| backoff(self.done));
        if self.waited + wait > self.ceiling {
            return None;
        }
        self.done += 1;
        self.waited += wait;
        Some(wait)
    }
}

/// The doubling wait before retry `done + 1` when the upstream names none.
fn backoff(done: u32) -> Duration {
    FIRST_BACKOFF.saturating_mul(1 << done.min(16))
}

/// The wait the upstream asks for: `retry-after-ms` (milliseconds, OpenAI's), else
/// `Retry-After` (whole seconds, or an HTTP date: the time until then, zero when past).
/// Unreadable values count as none.
pub(super) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name)?.to_str().ok().map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    let value = header("retry-after")?;
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait an error answer asks for, in whichever way its provider says it: the standard
/// headers ([`retry_after`]), else Anthropic's resets of its spent limits
/// ([`anthropic_reset`]), else Gemini's `RetryInfo` ([`gemini_retry_delay`]).
pub(super) fn asked_wait(headers: &HeaderMap, body: &[u8], now: SystemTime) -> Option<Duration> {
    retry_after(headers, now)
        .or_else(|| anthropic_reset(headers, now))
        .or_else(|| gemini_retry_delay(body))
}

/// The limits Anthropic reports in `anthropic-ratelimit-<limit>-remaining` / `-reset`.
const ANTHROPIC_LIMITS: [&str; 4] = ["requests", "tokens", "input-tokens", "output-tokens"];

/// When Anthropic names no `retry-after`: the time until the last reset (RFC 3339) of the
/// limits it reports spent (`…-remaining: 0`), as its SDK reads them.
fn anthropic_reset(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: String| headers.get(name)?.to_str().ok().map(str::trim);
    ANTHROPIC_LIMITS
        .iter()
        .filter(|limit| header(format!("anthropic-ratelimit-{limit}-remaining")) == Some("0"))
        .filter_map(|limit| {
            let reset = header(format!("anthropic-ratelimit-{limit}-reset"))?;
            let at = humantime::parse_rfc3339_weak(reset.trim_end_matches('Z')).ok()?;
            Some(at.duration_since(now).unwrap_or(Duration::ZERO))
        })
        .max()
}

/// Gemini's `error.details[]` entry of type `google.rpc.RetryInfo`: its `retryDelay`, a
/// protobuf duration (`"37s"`, `"1.5s"`). Its error body may come wrapped in an array.
fn gemini_retry_delay(body: &[u8]) -> Option<Duration> {
    let body: serde_json::Value = serde_json::from_slice(body).ok()?;
    let error = body.get("error").or_else(|| body.pointer("/0/error"))?;
    let details = error.get("details")?.as_array()?;
    details
        .iter()
        .filter(|d| {
            d.get("@type")
                .and_then(serde_json::Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|d| {
            let delay = d.get("retryDelay")?.as_str()?.trim().strip_suffix('s')?;
            let seconds = delay.parse::<f64>().ok()?;
            (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds))
        })
}

/// A wait as the progress line shows it: `2s`, `1.5s`, `250ms`.
pub(super) fn shown(wait: Duration) -> String {
    if wait < Duration::from_secs(1) {
        format!("{}ms", wait.as_millis())
    } else if wait.subsec_millis() == 0 {
        format!("{}s", wait.as_secs())
    } else {
        format!("{:.1}s", wait.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    fn now() -> SystemTime {
        httpdate::parse_http_date("Wed, 02 Dec 2026 03:00:00 GMT").unwrap()
    }

    #[test]
    fn only_rate_limits_and_server_failures_are_retried() {
        // 529: Anthropic's overloaded.
        for status in [429, 500, 502, 503, 529, 599] {
            assert!(retryable(status), "{status}");
        }
        for status in [200, 400, 401, 404, 408, 422, 600] {
            assert!(!retryable(status), "{status}");
        }
    }

    #[test]
    fn retry_after_takes_milliseconds_seconds_or_a_date() {
        let wait = |pairs: &[(&'static str, &str)]| retry_after(&headers(pairs), now());
        assert_eq!(wait(&[]), None);
        assert_eq!(wait(&[("retry-after", "2")]), Some(Duration::from_secs(2)));
        assert_eq!(wait(&[("retry-after", " 0 ")]), Some(Duration::ZERO));
        assert_eq!(
            wait(&[("retry-after-ms", "1500")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "12.5"), ("retry-after", "9")]),
            Some(Duration::from_micros(12_500)),
            "the milliseconds are the finer, and win"
        );
        assert_eq!(
            wait(&[("retry-after", "Wed, 02 Dec 2026 03:00:07 GMT")]),
            Some(Duration::from_secs(7))
        );
        assert_eq!(
            wait(&[("retry-after", "Wed, 02 Dec 2026 02:59:00 GMT")]),
            Some(Duration::ZERO),
            "a date past is now"
        );
        for bad in ["soon", "-3", "1.5", "Wed, 32 Dec 2026 03:00:00 GMT"] {
            assert_eq!(wait(&[("retry-after", bad)]), None, "{bad}");
        }
        assert_eq!(
            wait(&[("retry-after-ms", "-1"), ("retry-after", "3")]),
            Some(Duration::from_secs(3)),
            "an unreadable retry-after-ms falls back to Retry-After"
        );
    }

    #[test]
    fn without_a_header_the_wait_doubles_up_to_four_retries() {
        let mut retries = Retries::with_ceiling(Duration::from_secs(60));
        let waits: Vec<_> =
            std::iter::from_fn(|| retries.next(&HeaderMap::new(), b"", now())).collect();
        assert_eq!(waits, [1, 2, 4, 8].map(Duration::from_secs));
        assert_eq!(retries.done, MAX_RETRIES);
        assert_eq!(retries.waited, Duration::from_secs(15));
    }

    #[test]
    fn a_wait_past_the_ceiling_is_not_started() {
        let mut retries = Retries::with_ceiling(Duration::from_secs(10));
        let asks = headers(&[("retry-after", "6")]);
        assert_eq!(
            retries.next(&asks, b"", now()),
            Some(Duration::from_secs(6))
        );
        assert_eq!(retries.next(&asks, b"", now()), None, "6s + 6s > 10s");
        assert_eq!(retries.done, 1);
        let mut long = Retries::with_ceiling(Duration::from_secs(10));
        assert_eq!(
            long.next(&headers(&[("retry-after", "3600")]), b"", now()),
            None
        );
    }

    #[test]
    fn waits_are_shown_short() {
        assert_eq!(shown(Duration::from_secs(2)), "2s");
        assert_eq!(shown(Duration::from_millis(1500)), "1.5s");
        assert_eq!(shown(Duration::from_millis(1)), "1ms");
    }

    #[test]
    fn anthropic_names_its_wait_by_the_reset_of_a_spent_limit() {
        let limited = headers(&[
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2026-12-02T03:00:05Z"),
            ("anthropic-ratelimit-tokens-remaining", "0"),
            ("anthropic-ratelimit-tokens-reset", "2026-12-02T03:00:12Z"),
            // Not spent: its reset does not hold the retry back.
            ("anthropic-ratelimit-output-tokens-remaining", "900"),
            (
                "anthropic-ratelimit-output-tokens-reset",
                "2026-12-02T03:01:00Z",
            ),
        ]);
        assert_eq!(
            asked_wait(&limited, b"", now()),
            Some(Duration::from_secs(12))
        );
        let mut with_retry_after = limited.clone();
        with_retry_after.insert("retry-after", "3".parse().unwrap());
        assert_eq!(
            asked_wait(&with_retry_after, b"", now()),
            Some(Duration::from_secs(3)),
            "retry-after wins"
        );
        let past = headers(&[
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2026-12-02T02:59:00Z"),
        ]);
        assert_eq!(asked_wait(&past, b"", now()), Some(Duration::ZERO));
        let unspent = headers(&[
            ("anthropic-ratelimit-requests-remaining", "3"),
            ("anthropic-ratelimit-requests-reset", "2026-12-02T03:00:05Z"),
        ]);
        assert_eq!(asked_wait(&unspent, b"", now()), None);
    }

    #[test]
    fn an_overloaded_anthropic_answer_is_retried_after_its_retry_after() {
        let overloaded =
            br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert!(retryable(529));
        let mut retries = Retries::with_ceiling(Duration::from_secs(60));
        let asks = headers(&[("retry-after", "2")]);
        assert_eq!(
            retries.next(&asks, overloaded, now()),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retries.next(&HeaderMap::new(), overloaded, now()),
            Some(Duration::from_secs(2)),
            "no wait named: the backoff's second step"
        );
    }

    #[test]
    fn gemini_names_its_wait_in_the_error_body() {
        let exhausted = br#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": "You exceeded your current quota.",
            "details": [
              {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []},
              {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "37s"}]}}"#;
        assert_eq!(
            asked_wait(&HeaderMap::new(), exhausted, now()),
            Some(Duration::from_secs(37))
        );
        let wrapped = br#"[{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "1.5s"}]}}]"#;
        assert_eq!(
            asked_wait(&HeaderMap::new(), wrapped, now()),
            Some(Duration::from_millis(1500))
        );
        let without = br#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED"}}"#;
        assert_eq!(asked_wait(&HeaderMap::new(), without, now()), None);
        for bad in [
            &b"not json"[..],
            br#"{"error": {"details": [
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "soon"}]}}"#,
        ] {
            assert_eq!(asked_wait(&HeaderMap::new(), bad, now()), None);
        }
    }
}
