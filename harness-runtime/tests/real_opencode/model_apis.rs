//! The scripted model through each of OpenCode's provider packages (`model_api`): a tool-call
//! turn and a text turn through `@ai-sdk/openai` (the Responses API), `@ai-sdk/anthropic`
//! (Messages) and `@ai-sdk/google` (Gemini), each request on its package's own API.

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::ModelApi;
use harness_runtime::model::{Api, Reply};
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::test;
use serde_json::json;

use crate::support;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(openai_package_talks_the_responses_api).needs(OpenCode),
        test!(anthropic_package_talks_messages).needs(OpenCode),
        test!(google_package_talks_gemini).needs(OpenCode),
    ]
}

/// A turn that runs `bash`, then a text turn, through `api`'s package; every model request
/// must come in on `wire`.
async fn tool_call_and_text_turns(name: &str, api: ModelApi, wire: Api) {
    let options = ScenarioOptions {
        model_api: api,
        ..ScenarioOptions::DEFAULT
    };
    let mut live = support::agents::live_with(name, options);
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo hi > out.txt"}),
        ))
        .reply(Reply::text("Wrote out.txt.").in_deltas(3))
        .reply(Reply::text("Hello through the package.").in_deltas(2));
    let agent = support::start(&mut live).await.expect("provision opencode");
    let session = agent.create_session().await.expect("session");

    let turn = session
        .prompt("Write hi to out.txt")
        .await
        .expect("tool turn");
    assert!(turn.error().is_none(), "{:?}", turn.error());
    let out = std::fs::read_to_string(agent.workspace().join("out.txt")).expect("out.txt");
    assert_eq!(out, "hi\n");
    assert!(turn.tool_call("bash").is_some(), "{:?}", turn.tool_calls);
    assert_eq!(turn.text, "Wrote out.txt.");

    let turn = session.prompt("Say hello").await.expect("text turn");
    assert!(turn.error().is_none(), "{:?}", turn.error());
    assert_eq!(turn.text, "Hello through the package.");

    let requests = live.model().requests();
    assert!(
        requests.iter().all(|r| r.api == wire),
        "{:?}",
        requests
            .iter()
            .map(|r| (r.api, &r.model))
            .collect::<Vec<_>>()
    );
    let turns: Vec<_> = requests.iter().filter(|r| !r.is_title_request()).collect();
    assert_eq!(turns.len(), 3, "{requests:#?}");
    assert!(turns.iter().all(|r| r.stream && r.offers_tool("bash")));
    assert!(!turns[0].follows_tool_result() && turns[1].follows_tool_result());
    assert_eq!(
        turns[0].message_roles.first().map(String::as_str),
        Some("system")
    );
    assert_eq!(turns[2].last_user_text.as_deref(), Some("Say hello"));
    assert!(live.model().misses().is_empty());
    harness_runtime::testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn openai_package_talks_the_responses_api() {
    tool_call_and_text_turns("model_apis::openai", ModelApi::OpenAi, Api::Responses).await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_package_talks_messages() {
    tool_call_and_text_turns("model_apis::anthropic", ModelApi::Anthropic, Api::Anthropic).await;
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn google_package_talks_gemini() {
    tool_call_and_text_turns("model_apis::google", ModelApi::Google, Api::Gemini).await;
}
