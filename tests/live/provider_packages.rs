//! The scripted model through each of OpenCode's provider packages (`model_api`): a tool call
//! and a text turn through `@ai-sdk/openai-compatible` (chat completions), `@ai-sdk/openai`
//! (the Responses API), `@ai-sdk/anthropic` (Messages) and `@ai-sdk/google` (Gemini). The
//! evidence shows each request as the scripted model read it on that package's own API.

use harness_runtime::model::Api;
use harness_runtime::prelude::*;

/// A turn that runs `bash` then answers, and a text turn, every request on `wire`.
async fn tool_call_and_text(live: &mut Live, wire: Api) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo hi > out.txt"}),
        ))
        .reply(Reply::text("Wrote out.txt.").in_deltas(3))
        .reply(Reply::text("Hello through the package.").in_deltas(2));
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;

    let tool_turn = session.prompt("Write hi to out.txt").await?;
    anyhow::ensure!(tool_turn.error().is_none(), "{:?}", tool_turn.error());
    let out = std::fs::read_to_string(agent.workspace().join("out.txt"))?;
    anyhow::ensure!(out == "hi\n", "out.txt holds {out:?}");
    anyhow::ensure!(tool_turn.text == "Wrote out.txt.", "{:?}", tool_turn.text);

    let text_turn = session.prompt("Say hello").await?;
    anyhow::ensure!(text_turn.error().is_none(), "{:?}", text_turn.error());
    anyhow::ensure!(
        text_turn.text == "Hello through the package.",
        "{:?}",
        text_turn.text
    );

    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 3, "{} model requests", requests.len());
    anyhow::ensure!(
        requests.iter().all(|r| r.api == wire),
        "requests came in on {:?}",
        requests.iter().map(|r| r.api).collect::<Vec<_>>()
    );
    anyhow::ensure!(requests[1].follows_tool_result(), "no tool result");

    live.evidence().record_turn(&tool_turn);
    live.evidence().record_turn(&text_turn);
    live.evidence().record("files", json!({"out.txt": out}));
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(timeout = "120s", model_api = "openai-compatible")]
async fn openai_compatible_chat_completions(live: &mut Live) -> anyhow::Result<()> {
    tool_call_and_text(live, Api::OpenAi).await
}

#[live_agent_test(timeout = "120s", model_api = "openai")]
async fn openai_responses(live: &mut Live) -> anyhow::Result<()> {
    tool_call_and_text(live, Api::Responses).await
}

#[live_agent_test(timeout = "120s", model_api = "anthropic")]
async fn anthropic_messages(live: &mut Live) -> anyhow::Result<()> {
    tool_call_and_text(live, Api::Anthropic).await
}

#[live_agent_test(timeout = "120s", model_api = "google")]
async fn google_gemini(live: &mut Live) -> anyhow::Result<()> {
    tool_call_and_text(live, Api::Gemini).await
}
