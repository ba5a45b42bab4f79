//! The forwarder provisioning starts in front of every agent: a fixture agent's keeps its URL
//! across a restart on another port; real OpenCode's carries a scripted turn of the harness's own
//! client as the agent gives it, and holds it at a wire gate. Without OpenCode that test is
//! skipped with the reason, and fails under `CI` or `LIVE_STRICT=1`.

use crate::support;

use std::path::PathBuf;
use std::time::Duration;

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::client::{Client, CreateSession, Event};
use harness_runtime::gates::WirePoint;
use harness_runtime::model::{Matcher, Reply, Rule};
use harness_runtime::opencode::AgentOptions;
use harness_runtime::testing;
use harness_runtime::{AgentKind, Isolation, Live};
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::test;
use serde_json::Value;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(a_fixture_agents_forwarder_keeps_its_url_across_a_restart_on_another_port),
        test!(a_scripted_turn_through_the_forwarder_is_the_agents_and_a_wire_gate_holds_it)
            .needs(OpenCode),
        test!(a_shared_agents_forwarder_names_its_workspace_where_the_product_names_none)
            .needs(OpenCode),
    ]
}

fn ceiling(secs: u64) -> Duration {
    harness_runtime::scaled(Duration::from_secs(secs))
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(ceiling(60))
        .build()
        .unwrap()
}

async fn get(url: &str) -> (u16, Value) {
    let response = http().get(url).send().await.expect("a response");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A scenario context whose agents are fixture agents (this crate's `live-fixture-agent`).
fn fixture_live(name: &str) -> Live {
    testing::use_fixture_program(PathBuf::from(env!("CARGO_BIN_EXE_live-fixture-agent")));
    support::agents::live_with(
        name,
        ScenarioOptions {
            agent: AgentKind::Fixture,
            ..ScenarioOptions::DEFAULT
        },
    )
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn a_fixture_agents_forwarder_keeps_its_url_across_a_restart_on_another_port() {
    let mut live = fixture_live("forward::restart");
    let agent = live
        .opencode_with(support::agents::patient(AgentOptions::default()))
        .await
        .expect("provision the fixture agent");
    let url = agent.forwarded_url();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_ne!(url, agent.endpoint());
    assert_eq!(get(&format!("{url}/global/health")).await.0, 200);
    // On the same port: the forwarder's pooled connections to the old process are not reused.
    let port = agent.port();
    agent.restart().await.unwrap();
    assert_eq!(agent.port(), port);
    assert_eq!(get(&format!("{url}/global/health")).await.0, 200);

    agent.stop().await.unwrap();
    let (status, body) = get(&format!("{url}/session")).await;
    assert_eq!(status, 502, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.starts_with("live-forwarder: upstream http://127.0.0.1:[port] did not answer"),
        "{error}"
    );

    // The old port taken: the agent starts on another one, and the forwarder follows it.
    let old = agent.port();
    let _taken = std::net::TcpListener::bind(("127.0.0.1", old)).expect("hold the old port");
    agent.start().await.unwrap();
    assert_ne!(agent.port(), old);
    assert_eq!(agent.forwarded_url(), url);
    assert_eq!(get(&format!("{url}/global/health")).await.0, 200);
    let statuses: Vec<Option<u16>> = live.wire().requests().iter().map(|r| r.status).collect();
    assert_eq!(statuses, [Some(200), Some(200), Some(502), Some(200)]);
    testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_turn_through_the_forwarder_is_the_agents_and_a_wire_gate_holds_it() {
    let mut live = support::live("forward::turn");
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text("Forwarded.")));
    let agent = support::start(&mut live).await.expect("provision opencode");
    let direct = agent.client();
    let forwarded = Client::new(agent.forwarded_url(), live.redactor().clone());

    let by_agent = direct
        .create_session(&CreateSession::titled("direct"))
        .await
        .unwrap()
        .prompt("hello")
        .await
        .expect("the direct turn");
    let session = forwarded
        .create_session(&CreateSession::titled("forwarded"))
        .await
        .unwrap();
    let by_forwarder = session.prompt("hello").await.expect("the forwarded turn");
    assert_eq!(by_forwarder.text, "Forwarded.");
    assert_eq!(by_forwarder.text, by_agent.text);
    // The same events: the real server orders a few of them (`session.status` beside
    // `session.updated`) differently from turn to turn, so as sorted lists. The session's
    // summary (a `session.diff` and a `session.updated`) comes from a task OpenCode does not
    // await, which on a loaded machine ends after the turn's idle status, where a turn's trace
    // stops (seen once in CI): those two are left out, and each turn must still carry the
    // session's own `session.updated` (its prompt touches the session before it runs).
    let sorted = |trace: &[String]| {
        let mut trace: Vec<String> = trace
            .iter()
            .filter(|e| *e != "session.diff" && *e != "session.updated")
            .cloned()
            .collect();
        trace.sort();
        trace
    };
    assert_eq!(sorted(&by_forwarder.trace), sorted(&by_agent.trace));
    for trace in [&by_forwarder.trace, &by_agent.trace] {
        assert!(
            trace.iter().any(|e| e == "session.updated"),
            "no session.updated in {trace:?}"
        );
    }
    assert_eq!(by_forwarder.messages.len(), by_agent.messages.len());

    // Held on the wire at its first status (busy), the product's client still waits while the
    // turn ends in the agent.
    let mut agent_events = direct.subscribe().await.unwrap();
    let gate = live
        .gates()
        .arm(WirePoint::parse("event session.status").unwrap());
    let waiting = tokio::spawn({
        let session = session.clone();
        async move { session.prompt("again").await }
    });
    gate.wait_until_entered_within(Duration::from_secs(60))
        .await
        .unwrap();
    let idle = tokio::time::timeout(ceiling(60), async {
        loop {
            match agent_events.next_event().await.expect("the agent's events") {
                Some(Event::SessionIdle { session_id }) if session_id == session.id() => break,
                Some(_) => {}
                None => panic!("the agent's event stream ended"),
            }
        }
    });
    idle.await.expect("the turn ended in the agent");
    assert!(
        !waiting.is_finished(),
        "the product saw the turn end while held"
    );
    gate.release();
    let turn = waiting.await.unwrap().expect("the held turn");
    assert_eq!(turn.text, "Forwarded.");

    let routes: Vec<String> = live
        .wire()
        .requests()
        .iter()
        .map(|r| format!("{} {} {:?}", r.method, r.route, r.status))
        .collect();
    assert!(
        routes.contains(&"POST /session/{sessionID}/prompt_async Some(204)".to_owned())
            && routes.contains(&"GET /event Some(200)".to_owned()),
        "{routes:#?}"
    );
    let counters = live.wire().counters();
    assert_eq!(counters.requests["POST /session"], 1, "{counters:?}");
    // One stream per turn, both through the forwarder. The client may end a turn on its idle
    // status and close its stream before `session.idle` is delivered, so that is counted at
    // least once, not once per turn.
    assert_eq!(counters.events["server.connected"], 2, "{counters:?}");
    assert!(counters.events["session.idle"] >= 1, "{counters:?}");
    testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_agents_forwarder_names_its_workspace_where_the_product_names_none() {
    let mut live = support::agents::live_with(
        "forward::shared",
        ScenarioOptions {
            isolation: Some(Isolation::Shared),
            ..ScenarioOptions::DEFAULT
        },
    );
    let agent = live
        .opencode()
        .await
        .expect("a directory on a shared server");
    assert!(agent.is_shared());
    let url = agent.forwarded_url();
    let workspace = agent.workspace().display().to_string();
    let create = |header: Option<String>| {
        let mut request = http()
            .post(format!("{url}/session"))
            .json(&serde_json::json!({"title": "shared"}));
        if let Some(directory) = header {
            request = request.header("x-opencode-directory", directory);
        }
        async move {
            let created: Value = request.send().await.unwrap().json().await.unwrap();
            created["directory"].as_str().unwrap_or_default().to_owned()
        }
    };
    assert_eq!(
        create(None).await,
        workspace,
        "the agent's workspace, unnamed"
    );
    let elsewhere = agent.workspace().join("sub");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let named = elsewhere.display().to_string();
    assert_eq!(
        create(Some(named.clone())).await,
        named,
        "the product's own"
    );
    let (status, listed) = get(&format!("{url}/session")).await;
    assert_eq!(status, 200);
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["directory"].as_str())
        .collect();
    assert!(listed.contains(&workspace.as_str()), "{listed:?}");
    testing::finish_agents(&mut live, true)
        .await
        .expect("finish");
}
