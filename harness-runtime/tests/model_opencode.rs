//! End to end with the real OpenCode 1.18.33: does its AI SDK accept the scripted model's
//! streams? One server, three turns (text, bash tool + follow-up text, structured output).

#[path = "support/model_opencode.rs"]
mod opencode_support;

use harness_runtime::evidence::Redactor;
use harness_runtime::model::{Answer, ModelSlot, Reply};
use opencode_support::OpenCode;
use serde_json::{Value, json};

fn parts_of_type<'a>(message: &'a Value, kind: &str) -> Vec<&'a Value> {
    message["parts"]
        .as_array()
        .map(|parts| parts.iter().filter(|p| p["type"] == kind).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_opencode_accepts_text_tool_and_structured_replies() -> anyhow::Result<()> {
    let mut slot = ModelSlot::default();
    let model = slot.model()?.clone();
    let config =
        slot.opencode_config(json!({"bash": "allow", "edit": "allow", "webfetch": "deny"}));
    let opencode = OpenCode::start(&config).await?;

    // 1. A text reply in several deltas becomes the assistant's text part.
    model.reply(Reply::text("Hello from the scripted model").in_deltas(4));
    let session = opencode.create_session("model e2e").await?;
    let turn = opencode
        .prompt(
            &session,
            json!({"parts": [{"type": "text", "text": "Say hello"}]}),
        )
        .await?;
    assert!(turn["info"]["error"].is_null(), "turn failed: {turn}");
    let texts: Vec<&str> = parts_of_type(&turn, "text")
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(texts, vec!["Hello from the scripted model"], "turn: {turn}");

    // 2. A bash tool call runs (permission allow), then the follow-up text ends the turn.
    model.reply(Reply::tool_call(
        "bash",
        json!({"command": "echo hi > out.txt", "description": "write"}),
    ));
    model.reply(Reply::text("Wrote out.txt"));
    let turn = opencode
        .prompt(
            &session,
            json!({"parts": [{"type": "text", "text": "Write hi to out.txt"}]}),
        )
        .await?;
    assert!(turn["info"]["error"].is_null(), "turn failed: {turn}");
    let written = std::fs::read_to_string(opencode.workspace.join("out.txt"))?;
    assert_eq!(written, "hi\n");
    let texts: Vec<&str> = parts_of_type(&turn, "text")
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(texts, vec!["Wrote out.txt"], "turn: {turn}");

    // 3. A json_schema prompt is answered through the StructuredOutput tool.
    model.reply(Reply::structured(json!({"answer": "42"})));
    let schema = json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]});
    let turn = opencode
        .prompt(
            &session,
            json!({"parts": [{"type": "text", "text": "What is the answer?"}],
                   "format": {"type": "json_schema", "schema": schema}}),
        )
        .await?;
    assert_eq!(
        turn["info"]["structured"],
        json!({"answer": "42"}),
        "turn: {turn}"
    );

    // What OpenCode sent, as recorded.
    let requests = model.requests();
    if let Some(path) = std::env::var_os("MODEL_CAPTURE_REQUESTS") {
        let raw: Vec<&Value> = requests.iter().map(|r| &r.raw).collect();
        std::fs::write(path, serde_json::to_string_pretty(&raw)?)?;
    }
    assert_eq!(requests.len(), 4, "requests: {:#?}", model.summaries());
    assert!(requests.iter().all(|r| r.stream && r.include_usage));
    assert!(
        requests
            .iter()
            .all(|r| r.answer != Answer::Miss && r.answer != Answer::Title)
    );
    assert!(requests[0].offers_tool("bash"));
    assert_eq!(requests[0].tool_choice, Some(json!("auto")));
    assert_eq!(requests[0].last_user_text.as_deref(), Some("Say hello"));
    assert!(requests[2].follows_tool_result());
    assert!(requests[3].offers_tool("StructuredOutput"));
    assert_eq!(requests[3].tool_choice, Some(json!("required")));
    assert_eq!(model.pending(), 0);
    slot.finish(&Redactor::for_scenario())
        .map_err(anyhow::Error::msg)?;
    drop(opencode);
    Ok(())
}
