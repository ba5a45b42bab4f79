//! Scenarios that need no agent: the suite itself is wired correctly.

use harness_runtime::prelude::*;

#[live_agent_test(timeout = "30s")]
async fn knows_its_name(live: &mut Live) -> anyhow::Result<()> {
    anyhow::ensure!(
        live.name() == "smoke::knows_its_name",
        "name was {}",
        live.name()
    );
    live.progress("the runner registered this scenario under its module path");
    Ok(())
}

/// Evidence needs no agent: what a scenario records is checked against
/// `snapshots/smoke__records_evidence.snap`, whose `source:` names this file.
#[live_agent_test(timeout = "30s")]
async fn records_evidence(live: &mut Live) -> anyhow::Result<()> {
    live.evidence().record("scenario", live.name());
    live.assert_evidence();
    Ok(())
}

/// Skipped (with the reason) until `ADOPTER_API_KEY` is set; fails instead under `LIVE_STRICT=1`.
#[live_agent_test(requires = ["ADOPTER_API_KEY"])]
async fn uses_a_key(live: &mut Live) -> anyhow::Result<()> {
    let key = std::env::var("ADOPTER_API_KEY")?;
    live.secret(&key);
    anyhow::ensure!(
        !live.redactor().redact(&key).contains(&key),
        "key not redacted"
    );
    Ok(())
}
