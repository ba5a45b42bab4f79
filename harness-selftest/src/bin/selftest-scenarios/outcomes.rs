//! One scenario per outcome of a body.

use std::time::Duration;

use harness_runtime::prelude::*;

/// A secret the failing scenarios leak on purpose: the runner must redact it.
const SECRET: &str = "selftest-secret-value-7f3a";

#[live_agent_test(timeout = "20s")]
async fn passes(live: &mut Live) -> anyhow::Result<()> {
    anyhow::ensure!(
        live.name() == "outcomes::passes",
        "name was {}",
        live.name()
    );
    // The trial's runtime is multi-threaded with the time and io drivers on.
    let sum = tokio::spawn(async { 40 + 2 }).await?;
    anyhow::ensure!(sum == 42);
    let blocking = tokio::task::spawn_blocking(|| "done").await?;
    anyhow::ensure!(blocking == "done");
    Ok(())
}

#[live_agent_test]
async fn returns_err(_live: &mut Live) -> anyhow::Result<()> {
    Err(anyhow::anyhow!("the answer was 41, expected 42"))
}

#[live_agent_test]
async fn panics(_live: &mut Live) {
    panic!("boom at step 3");
}

// The body outlasts its 1 s ceiling by far, so a test can tell "the ceiling ended it" from
// "a loaded machine was slow to start the binary".
#[live_agent_test(timeout = "1s")]
async fn times_out(_live: &mut Live) {
    tokio::time::sleep(Duration::from_secs(120)).await;
}

#[live_agent_test]
async fn leaks_secret_in_err(live: &mut Live) -> anyhow::Result<()> {
    live.secret(SECRET);
    live.progress(format!("using token {SECRET}"));
    Err(anyhow::anyhow!("server rejected token {SECRET}"))
}

#[live_agent_test]
async fn leaks_secret_in_panic(live: &mut Live) {
    live.secret(SECRET);
    panic!("server rejected token {SECRET}");
}
