//! Script mistakes the scripted model catches: a scripted call of a tool the request did not
//! offer fails the scenario at its end, as a request nothing answered does.

use std::time::Duration;

use harness_runtime::model::{Answer, Matcher, Reply, Rule, ScriptedModel, ScriptedToolCall};
use harness_runtime::redact::Redactor;
use harness_runtime::testing::ModelSlot;
use serde_json::{Value, json};

/// A chat body offering `tools` (none: no `tools` field at all), not streamed.
fn chat(tools: &[&str], text: &str) -> Value {
    let mut body = json!({"model": "scripted-model", "stream": false,
                          "messages": [{"role": "user", "content": text}]});
    if !tools.is_empty() {
        body["tools"] = tools
            .iter()
            .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {}}}))
            .collect();
    }
    body
}

async fn post(model: &ScriptedModel, path: &str, body: &Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}{path}", model.ollama_url()))
        .json(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("the scripted model answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_call_of_a_tool_not_offered_is_a_400_and_fails_the_scenario_naming_both() {
    let mut slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    model.reply(Reply::tool_call(
        "webfetch",
        json!({"url": "https://example.com"}),
    ));
    let (status, body) = post(
        &model,
        "/v1/chat/completions",
        &chat(&["bash", "read"], "fetch it"),
    )
    .await;
    assert_eq!(status, 400, "the turn ends at once, as for a miss: {body}");
    let message = body["error"]["message"].as_str().expect("OpenAI's shape");
    assert!(
        message.contains("\"webfetch\"") && message.contains("bash, read"),
        "{message}"
    );
    assert_eq!(
        model.requests()[0].answer,
        Answer::UnofferedTool {
            reply: "tool calls [webfetch]".into(),
            tool: "webfetch".into(),
        }
    );
    assert!(
        model.misses().is_empty(),
        "answered, but wrongly: not a miss"
    );
    let error = slot
        .finish(&Redactor::for_scenario())
        .unwrap_err()
        .to_string();
    for expected in [
        "1 scripted tool call(s) named a tool the request did not offer",
        "tool \"webfetch\" (offered: bash, read)",
        "request #0 POST /v1/chat/completions",
        "fetch it",
    ] {
        assert!(error.contains(expected), "{expected:?} in:\n{error}");
    }
}

#[tokio::test]
async fn a_tool_call_to_a_request_offering_no_tools_is_the_same_mistake() {
    let mut slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    // A rule's reply is checked like a queued one; on Ollama the error is Ollama's shape.
    model.rule(Rule::when(Matcher::any()).reply(Reply::structured(json!({"answer": 1}))));
    let (status, body) = post(&model, "/api/chat", &chat(&[], "plain question")).await;
    assert_eq!(status, 400);
    let message = body["error"].as_str().expect("Ollama's shape");
    assert!(
        message.contains("\"StructuredOutput\"") && message.contains("offered: none"),
        "{message}"
    );
    let error = slot
        .finish(&Redactor::for_scenario())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("tool \"StructuredOutput\" (offered: none)"),
        "{error}"
    );
}

#[tokio::test]
async fn every_call_of_a_reply_is_checked_and_offered_tools_pass() {
    let mut slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    model
        .reply(Reply::tool_calls(vec![
            ScriptedToolCall::new("bash", json!({"command": "ls"})),
            ScriptedToolCall::new("read", json!({"filePath": "a"})),
        ]))
        .reply(Reply::tool_calls(vec![
            ScriptedToolCall::new("bash", json!({"command": "ls"})),
            ScriptedToolCall::new("write", json!({"filePath": "a"})),
        ]));
    let offered = chat(&["bash", "read"], "go");
    let (status, _) = post(&model, "/v1/chat/completions", &offered).await;
    assert_eq!(status, 200);
    slot.finish(&Redactor::for_scenario())
        .expect("everything was answered");
    let (status, body) = post(&model, "/v1/chat/completions", &offered).await;
    assert_eq!(status, 400);
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"write\"")),
        "{body}"
    );
    assert!(slot.finish(&Redactor::for_scenario()).is_err());
}

#[tokio::test]
async fn the_end_report_is_redacted() {
    let mut slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    model.reply(Reply::tool_call("edit", json!({})));
    post(
        &model,
        "/v1/chat/completions",
        &chat(&["bash"], "token hunter2"),
    )
    .await;
    let redactor = Redactor::for_scenario();
    redactor.add_secret("hunter2");
    let error = slot.finish(&redactor).unwrap_err().to_string();
    assert!(
        error.contains("token [secret]") && !error.contains("hunter2"),
        "{error}"
    );
}
