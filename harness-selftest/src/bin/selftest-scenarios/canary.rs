//! The secret canary: two secrets reach every output a real turn has, and the scenario then fails
//! with both in its error. `tests/runs/hygiene.rs` proves neither appears in the snapshot, stdout,
//! stderr, the failure message or the kept logs.
//!
//! `CANARY_API_KEY` is a secret by its name (the redactor seeds it from the environment);
//! `CANARY_PLAIN` is not, so the scenario registers it with `live.secret`.

use anyhow::Context;
use harness_runtime::client::ToolStatus;
use harness_runtime::prelude::*;

#[live_agent_test(timeout = "180s", requires = ["SELFTEST_SCRATCH", "CANARY_API_KEY", "CANARY_PLAIN"])]
async fn secrets_never_leak(live: &mut Live) -> anyhow::Result<()> {
    let key = std::env::var("CANARY_API_KEY")?;
    let plain = std::env::var("CANARY_PLAIN")?;
    live.secret(&plain);
    live.progress(format!("canaries {key} and {plain} set"));

    // The bash tool prints both from its environment (the server's, inherited); the model then
    // echoes both in its text.
    live.model().reply(Reply::tool_call(
        "bash",
        json!({
            "command": "echo \"key=$CANARY_API_KEY plain=$CANARY_PLAIN\"",
            "description": "Print the canaries"
        }),
    ));
    live.model()
        .reply(Reply::text(format!("The key is {key} and the word is {plain}.")).in_deltas(3));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Print the canaries").await?;

    // The raw turn holds both secrets: the redaction below has something to do.
    let output = turn
        .tool_calls
        .first()
        .filter(|call| call.status == ToolStatus::Completed)
        .and_then(|call| call.output.clone())
        .context("the bash call did not complete with output")?;
    anyhow::ensure!(
        output.contains(&key) && output.contains(&plain),
        "the tool did not print the canaries"
    );
    anyhow::ensure!(
        turn.text.contains(&key) && turn.text.contains(&plain),
        "the model's text lacks the canaries"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record("tool_output", output.trim());
    live.evidence().record("text", &turn.text);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Err(anyhow::anyhow!(
        "deliberate failure: the key was {key}, the word was {plain}"
    ))
}
