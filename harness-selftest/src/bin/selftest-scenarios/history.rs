//! A scenario whose outcome the test chooses, run after run: it fails when
//! `SELFTEST_HISTORY_FAIL` is set, naming its value, a secret; it needs no agent. Driven by
//! `tests/runs/report.rs` to build a history (new failure, known flake, repeat).

use harness_runtime::prelude::*;

#[live_agent_test(timeout = "20s")]
async fn fails_when_asked(live: &mut Live) -> anyhow::Result<()> {
    match std::env::var("SELFTEST_HISTORY_FAIL") {
        Ok(secret) => {
            live.secret(&secret);
            Err(anyhow::anyhow!(
                "asked to fail, with the key {secret}\nsecond line"
            ))
        }
        Err(_) => Ok(()),
    }
}
