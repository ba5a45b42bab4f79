//! The cases of the rate-limit test, shared by both sides: what each `rate_limits::` scenario of
//! `selftest-scenarios` does, and how the scripted upstream of `tests/runs/rate_limits.rs` answers
//! it.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};
use serde_json::json;

/// Where the timing scenarios write when their body started and ended (a folder the test
/// makes); they are skipped without it.
pub const TIMES_DIR: &str = "SELFTEST_TIMES_DIR";

/// Answered 429 with `Retry-After: 1` once, then [`ANSWER`]: recorded.
pub const RECORDED_AFTER_429: &str = "Rate limits: record after one 429";
/// Answered 429 with `Retry-After: 1` once, then [`ANSWER`]: live, through the relay.
pub const LIVE_AFTER_429: &str = "Rate limits: live after one 429";
/// Always answered 429 (`retry-after-ms: 1`): the relay's retries and OpenCode's run out.
pub const ALWAYS_429: &str = "Rate limits: always rate-limited";
/// The text after the 429.
pub const ANSWER: &str = "Answered after the rate limit.";
/// How long a timing scenario's body holds its live-model slot or thread.
pub const LIVE_HOLD: Duration = Duration::from_millis(1500);
/// How long a scripted timing scenario's body takes.
pub const SCRIPTED_HOLD: Duration = Duration::from_millis(200);

/// Scripts `model` as the upstream of every case.
pub fn script_upstream(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    let rate_limited = || {
        Reply::http_error(
            429,
            json!({"error": {"message": "scripted rate limit", "type": "rate_limit_exceeded"}}),
        )
    };
    model
        .rule(
            Rule::when(asks(RECORDED_AFTER_429))
                .reply(rate_limited().with_retry_after(1))
                .times(1),
        )
        .rule(Rule::when(asks(RECORDED_AFTER_429)).reply(Reply::text(ANSWER)))
        .rule(
            Rule::when(asks(LIVE_AFTER_429))
                .reply(rate_limited().with_retry_after(1))
                .times(1),
        )
        .rule(Rule::when(asks(LIVE_AFTER_429)).reply(Reply::text(ANSWER)))
        .rule(Rule::when(asks(ALWAYS_429)).reply(rate_limited().with_retry_after_ms(1)));
}

/// Writes `<dir>/<name>`: the body's start and end, in milliseconds since the epoch.
pub fn write_times(dir: &Path, name: &str, start: SystemTime, end: SystemTime) {
    let ms = |at: SystemTime| {
        at.duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis()
    };
    std::fs::write(dir.join(name), format!("{} {}", ms(start), ms(end)))
        .unwrap_or_else(|e| panic!("could not write the times of {name}: {e}"));
}

/// Every `(name, start ms, end ms)` written to `dir`, by name.
pub fn read_times(dir: &Path) -> Vec<(String, u128, u128)> {
    let mut all: Vec<(String, u128, u128)> = std::fs::read_dir(dir)
        .expect("the times folder reads")
        .map(|entry| {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let (start, end) = text.split_once(' ').expect("`<start> <end>`");
            (
                entry.file_name().to_string_lossy().into_owned(),
                start.parse().unwrap(),
                end.parse().unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

/// The most of `spans` that overlap at one instant.
pub fn most_at_once(spans: &[(u128, u128)]) -> usize {
    spans
        .iter()
        .map(|(start, _)| {
            spans
                .iter()
                .filter(|(s, e)| s <= start && start < e)
                .count()
        })
        .max()
        .unwrap_or(0)
}
