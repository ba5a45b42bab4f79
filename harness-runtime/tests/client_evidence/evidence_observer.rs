//! The observer against the fixture agent: what a product did through the forwarder is recorded
//! whole, in a turn's form, though the product's own stream dropped; a restart and a stream the
//! agent cut leave a gap the record names, while the messages stay complete; a structured
//! output the agent no longer answers messages for comes from the events; a stopped agent's
//! record is what its events said; on a server of its own every directory's sessions count.

use std::time::Duration;

use harness_runtime::client::{Client, Event, Session};
use harness_runtime::evidence::Observed;
use harness_runtime::fixture::Fault;
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use harness_runtime::testing;
use serde_json::Value;

use crate::fixture_live;

use fixture_live::live;

fn ceiling() -> Duration {
    scaled(Duration::from_secs(60))
}

/// The parts of the fixture's assistant message in a turn that runs a tool.
const TOOL_TURN: [&str; 4] = ["step-start", "tool", "text", "step-finish"];

/// A session the product made: its title, made through its client.
async fn session(client: &Client, title: &str) -> Session {
    client
        .create_session(&CreateSession::titled(title))
        .await
        .unwrap()
}

/// Provisions the agent and a product on it (a client of the agent's forwarded URL, as a
/// product's own client would be) with a session it made.
async fn product_session(live: &mut Live) -> (Agent, Client, Session) {
    let agent = live.opencode().await.unwrap();
    let client = Client::new(agent.forwarded_url(), live.redactor().clone());
    let session = session(&client, "product").await;
    (agent, client, session)
}

/// What a recovering product does once its stream dropped mid-turn: subscribes again, then
/// (when the turn still runs) waits for the session's idle, replying `once` to any ask.
async fn recover(client: &Client, session: &Session) {
    let mut events = client.subscribe().await.expect("subscribe again");
    for ask in client.permissions().await.unwrap() {
        client
            .reply_permission(&ask.session_id, &ask.id, PermissionReply::Once, None)
            .await
            .unwrap();
    }
    if !client.statuses().await.unwrap().contains_key(session.id()) {
        return;
    }
    let idle = async {
        loop {
            match events.next_event().await.expect("the product's stream") {
                Some(Event::SessionIdle { session_id }) if session_id == session.id() => return,
                Some(Event::PermissionAsked(ask)) => client
                    .reply_permission(&ask.session_id, &ask.id, PermissionReply::Once, None)
                    .await
                    .unwrap(),
                Some(_) => {}
                None => panic!("the product's stream ended before the session was idle"),
            }
        }
    };
    tokio::time::timeout(ceiling(), idle)
        .await
        .expect("the session went idle");
}

fn json(observed: &Observed) -> Value {
    serde_json::to_value(observed).unwrap()
}

/// The product's stream is dropped right before the permission ask reaches it: the product
/// recovers on a new stream, and the observer, on a stream of its own, saw everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_products_turn_is_observed_whole_though_its_stream_dropped() {
    let mut live = live("evidence_observer::stream_dropped");
    live.fixture().inject(Fault::Decide).unwrap();
    let (agent, client, session) = product_session(&mut live).await;
    live.wire()
        .drop_event_stream_at("permission.asked", 1)
        .unwrap();
    let prompt =
        Prompt::new("run the tool").asks(AskPolicy::default().permissions(PermissionPolicy::Once));
    let dropped = session.prompt_with(prompt).await;
    assert!(
        matches!(dropped, Err(ClientError::StreamEnded { .. })),
        "the product's stream was dropped: {dropped:?}"
    );
    recover(&client, &session).await;

    let observed = agent.observed().await;
    assert_eq!(
        json(&observed),
        json!({"sessions": [{
            "id": "[session-1]",
            // As on the real server: busy, busy again as the step starts; after the reply the
            // tool's step ends, the next is announced busy twice, then idle.
            "events": ["session.created", "session.status ×2", "permission.asked",
                       "permission.replied", "session.status ×3"],
            // The tool ends its step: the turn goes on in a second assistant message.
            "messages": [
                {"role": "user", "parts": ["text"]},
                {"role": "assistant", "parts": ["step-start", "tool", "step-finish"]},
                {"role": "assistant", "parts": ["step-start", "text", "step-finish"]},
            ],
            "tool_calls": [{"tool": "bash", "status": "completed"}],
            "interactions": [{"kind": "permission", "subject": "bash", "reply": "once"}],
        }]}),
        "{observed:#?}"
    );
    live.evidence().record_observed(&observed);
    assert_eq!(live.evidence().get("observed"), Some(json(&observed)));
    testing::finish_agents(&mut live, true).await.unwrap();
}

/// A stopped agent's record is what its events said; after a restart the record says events
/// may be missing, and sessions of both servers are in it, in creation order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_is_a_gap_the_record_names() {
    let mut live = live("evidence_observer::restart");
    let (agent, client, first) = product_session(&mut live).await;
    first.prompt("hello").await.unwrap();

    agent.stop().await.unwrap();
    let stopped = agent.observed().await;
    assert_eq!(stopped.sessions.len(), 1, "{stopped:#?}");
    assert!(stopped.gaps.is_empty(), "{stopped:#?}");
    let turn_shape = json!({
        "id": "[session-1]",
        // busy, busy again as the step starts, idle: as on the real server.
        "events": ["session.created", "session.status ×3"],
        "messages": [
            {"role": "user", "parts": ["text"]},
            {"role": "assistant", "parts": ["step-start", "text", "step-finish"]},
        ],
    });
    assert_eq!(json(&stopped)["sessions"][0], turn_shape, "{stopped:#?}");

    agent.start().await.unwrap();
    let second = session(&client, "after").await;
    second.prompt("hello again").await.unwrap();
    let observed = agent.observed().await;
    assert_eq!(
        observed.gaps,
        [
            "the agent restarted: events between the end of its event stream and the \
          observer's new subscription may be missing"
        ],
        "{observed:#?}"
    );
    let ids: Vec<&str> = observed.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["[session-1]", "[session-2]"], "{observed:#?}");
    let mut after = turn_shape;
    after["id"] = json!("[session-2]");
    assert_eq!(json(&observed)["sessions"][1], after, "{observed:#?}");
    testing::finish_agents(&mut live, true).await.unwrap();
}

/// The agent cuts every event stream after a tool (the fixture's fault): the observer
/// subscribes again and says events may be missing; the messages, read from the agent, are
/// complete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_the_agent_cut_is_a_gap_and_the_messages_stay_complete() {
    let mut live = live("evidence_observer::agent_cut");
    live.fixture().inject(Fault::DisconnectAfterTool).unwrap();
    let (agent, client, session) = product_session(&mut live).await;
    let cut = session.prompt("run the tool").await;
    assert!(cut.is_err(), "the agent cut the product's stream: {cut:?}");
    recover(&client, &session).await;
    live.fixture().clear(&Fault::DisconnectAfterTool).unwrap();

    let observed = agent.observed().await;
    assert_eq!(
        observed.gaps,
        [
            "the agent's event stream ended while it ran: events until the observer subscribed \
          again may be missing"
        ],
        "{observed:#?}"
    );
    let summary = &observed.sessions[0].summary;
    assert_eq!(
        serde_json::to_value(&summary.tool_calls).unwrap(),
        json!([{"tool": "bash", "status": "completed"}]),
        "{observed:#?}"
    );
    assert_eq!(
        summary.messages.last().map(|m| m.parts.clone()),
        Some(TOOL_TURN.map(String::from).to_vec()),
        "{observed:#?}"
    );
    testing::finish_agents(&mut live, true).await.unwrap();
}

/// After a prompt with a format the agent answers no messages for the session (as OpenCode
/// does): the structured output comes from the events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_structured_output_is_observed_from_the_events() {
    let mut live = live("evidence_observer::structured");
    let (agent, _, session) = product_session(&mut live).await;
    let schema = json!({
        "type": "object",
        "properties": {"decision": {"type": "string"}},
        "required": ["decision"],
    });
    let turn = session
        .prompt_with(Prompt::new("decide").json_schema(schema))
        .await
        .unwrap();
    let structured = turn.structured.clone().expect("a structured output");
    assert!(
        agent.client().messages(session.id()).await.is_err(),
        "the agent answers no messages after a format prompt"
    );
    let observed = agent.observed().await;
    let summary = &observed.sessions[0].summary;
    assert_eq!(summary.structured_output, Some(structured), "{observed:#?}");
    assert!(
        summary
            .tool_calls
            .iter()
            .any(|c| c.tool == "StructuredOutput"),
        "{observed:#?}"
    );
    testing::finish_agents(&mut live, true).await.unwrap();
}

/// On a server of its own every directory is the agent's: a session the product makes in
/// another directory is in the record too, after the one it made first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_of_every_directory_of_its_own_server_are_observed() {
    let mut live = live("evidence_observer::directories");
    let (agent, client, first) = product_session(&mut live).await;
    let elsewhere = agent.workspace().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let second = session(&client.clone().with_directory(&elsewhere), "elsewhere").await;
    first.prompt("hello").await.unwrap();
    second.prompt("hello").await.unwrap();

    let observed = agent.observed().await;
    let ids: Vec<&str> = observed.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["[session-1]", "[session-2]"], "{observed:#?}");
    for session in &observed.sessions {
        assert_eq!(session.summary.messages.len(), 2, "{observed:#?}");
    }
    testing::finish_agents(&mut live, true).await.unwrap();
}
