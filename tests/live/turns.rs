//! Turns against real OpenCode and the scripted model: text, streaming, several turns, model
//! failures surfaced as typed errors.

use harness_runtime::prelude::*;

#[live_agent_test(timeout = "120s")]
async fn plain_text_reply(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::text("Hello from the scripted model."));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Say hello").await?;
    anyhow::ensure!(
        turn.text == "Hello from the scripted model.",
        "text was {:?}",
        turn.text
    );
    anyhow::ensure!(
        turn.error().is_none(),
        "unexpected error {:?}",
        turn.error()
    );
    live.evidence().record_turn(&turn);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
