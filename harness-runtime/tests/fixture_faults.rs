//! One test per turn fault: injected through the typed `FixtureControl`, observed as a client
//! of the fixture agent sees it, within a ceiling.

mod fixture_common;

use std::time::Duration;

use fixture_common::schema::Shapes;
use fixture_common::*;
use harness_runtime::fixture::{Fault, FixtureControl};
use serde_json::{Value, json};

struct Setup {
    _home: tempfile::TempDir,
    control: FixtureControl,
    agent: Agent,
    events: Events,
    sid: String,
}

async fn setup(faults: &[Fault]) -> Setup {
    let home = tempfile::tempdir().unwrap();
    let control = FixtureControl::attached_to(home.path()).unwrap();
    for fault in faults {
        control.inject(fault.clone()).unwrap();
    }
    let agent = Agent::ready(home.path());
    let events = Events::subscribe(&agent).await;
    let sid = new_session(&agent).await;
    Setup {
        _home: home,
        control,
        agent,
        events,
        sid,
    }
}

impl Setup {
    async fn turn(&mut self, body: Value) -> Vec<Value> {
        let events = prompt_turn(&self.agent, &mut self.events, &self.sid, body).await;
        let shapes = Shapes::load();
        for event in &events {
            shapes
                .check_event(event)
                .unwrap_or_else(|e| panic!("{e}\nevent: {event}"));
        }
        events
    }

    /// Waits for the first event of `kind` and returns its properties.
    async fn wait_for(&mut self, kind: &str) -> Value {
        let (seen, ended) = self
            .events
            .until(ceiling(10.0), |e| e["type"] == kind)
            .await;
        assert!(!ended, "stream ended before {kind}");
        seen.last().unwrap()["properties"].clone()
    }

    fn prompt_async(&self, body: Value) -> tokio::task::JoinHandle<()> {
        let url = self
            .agent
            .url(&format!("/session/{}/prompt_async", self.sid));
        tokio::spawn(async move {
            let response = http().post(url).json(&body).send().await.unwrap();
            assert_eq!(response.status(), 204);
        })
    }
}

fn error_of(events: &[Value]) -> Value {
    final_assistant(events)["error"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_fail_once_fails_one_turn_with_an_api_error() {
    let mut s = setup(&[Fault::FailOnce]).await;
    let events = s.turn(text_prompt("hi")).await;
    assert_eq!(
        error_of(&events),
        json!({"name": "APIError", "data": {"message": "fixture failure", "isRetryable": false}})
    );
    let session_error = events
        .iter()
        .find(|e| e["type"] == "session.error")
        .expect("session.error");
    assert_eq!(session_error["properties"]["error"]["name"], "APIError");
    let next = s.turn(text_prompt("hi")).await;
    assert!(error_of(&next).is_null(), "only once");
    assert!(!types(&next).contains(&"session.error".to_string()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_transient_once_is_a_502_with_structured_output_attached() {
    let mut s = setup(&[Fault::TransientOnce]).await;
    let events = s.turn(decision_prompt()).await;
    let info = final_assistant(&events);
    assert_eq!(info["error"]["data"]["statusCode"], 502);
    assert_eq!(info["error"]["data"]["isRetryable"], true);
    assert_eq!(
        info["structured"],
        json!({"decision": "iterate", "summary": "Failed turn cannot navigate"})
    );
    let next = final_assistant(&s.turn(decision_prompt()).await);
    assert!(next["error"].is_null());
    assert_eq!(next["structured"]["decision"], "advance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_decide_asks_a_permission_and_continues_on_reply() {
    let mut s = setup(&[Fault::Decide]).await;
    let turn = s.prompt_async(text_prompt("run it"));
    let asked = s.wait_for("permission.asked").await;
    assert_eq!(asked["permission"], "bash");
    let listed = get(&s.agent.url("/permission")).await.1;
    assert_eq!(listed, json!([asked.clone()]));
    Shapes::load()
        .check_route("GET /permission", 200, &listed)
        .unwrap();
    let id = asked["id"].as_str().unwrap();
    assert_eq!(
        post(
            &s.agent.url(&format!("/permission/{id}/reply")),
            json!({"reply": "once"})
        )
        .await,
        (200, json!(true))
    );
    assert_eq!(
        post(
            &s.agent.url(&format!("/permission/{id}/reply")),
            json!({"reply": "once"})
        )
        .await
        .0,
        404,
        "second reply"
    );
    let events = s.events.turn(&s.sid).await;
    turn.await.unwrap();
    let replied = events
        .iter()
        .find(|e| e["type"] == "permission.replied")
        .unwrap();
    assert_eq!(replied["properties"]["reply"], "once");
    let info = final_assistant(&events);
    assert!(info["error"].is_null());
    let messages = get(&s.agent.url(&format!("/session/{}/message", s.sid)))
        .await
        .1;
    let tool = messages[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool["state"]["status"], "completed");
    assert_eq!(get(&s.agent.url("/permission")).await.1, json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_decide_unanswered_fails_within_its_ceiling_and_reject_errors_the_tool() {
    let mut s = setup(&[Fault::DecideWithin(Duration::from_millis(300))]).await;
    let events = s.turn(text_prompt("run it")).await;
    assert_eq!(
        error_of(&events)["data"]["message"],
        "fixture permission unanswered"
    );
    assert_eq!(
        get(&s.agent.url("/permission")).await.1,
        json!([]),
        "withdrawn"
    );

    s.control
        .inject(Fault::DecideWithin(ceiling(15.0)))
        .unwrap();
    let turn = s.prompt_async(text_prompt("run it"));
    let asked = s.wait_for("permission.asked").await;
    // The older route, `/session/{id}/permissions/{id}`, is served too.
    let legacy = format!(
        "/session/{}/permissions/{}",
        s.sid,
        asked["id"].as_str().unwrap()
    );
    assert_eq!(
        post(&s.agent.url(&legacy), json!({"response": "reject"})).await,
        (200, json!(true))
    );
    let events = s.events.turn(&s.sid).await;
    turn.await.unwrap();
    assert!(error_of(&events).is_null());
    let tool = events
        .iter()
        .rev()
        .find(|e| e["properties"]["part"]["type"] == "tool")
        .unwrap();
    assert_eq!(tool["properties"]["part"]["state"]["status"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_decide_abort_while_pending_is_message_aborted() {
    let mut s = setup(&[Fault::Decide]).await;
    let turn = s.prompt_async(text_prompt("run it"));
    let asked = s.wait_for("permission.asked").await;
    assert_eq!(
        get(&s.agent.url("/session/status")).await.1[&s.sid]["type"],
        "busy"
    );
    assert_eq!(
        post(
            &s.agent.url(&format!("/session/{}/abort", s.sid)),
            json!({})
        )
        .await,
        (200, json!(true))
    );
    // As on the real server (1.18.33), the abort is reported at once (`session.error`, idle),
    // then the tool part ends interrupted and the message completes, idle again.
    let mut events = s.events.turn(&s.sid).await;
    assert!(types(&events).contains(&"session.error".to_string()));
    events.extend(s.events.turn(&s.sid).await);
    turn.await.unwrap();
    assert_eq!(error_of(&events)["name"], "MessageAbortedError");
    // As on the real server, the request stays listed after the abort.
    assert_eq!(
        get(&s.agent.url("/permission")).await.1[0]["id"],
        asked["id"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_ask_question_waits_for_the_answer() {
    let mut s = setup(&[Fault::AskQuestion]).await;
    let turn = s.prompt_async(text_prompt("ask me"));
    let asked = s.wait_for("question.asked").await;
    let listed = get(&s.agent.url("/question")).await.1;
    Shapes::load()
        .check_route("GET /question", 200, &listed)
        .unwrap();
    let id = asked["id"].as_str().unwrap();
    assert_eq!(
        post(
            &s.agent.url(&format!("/question/{id}/reply")),
            json!({"answers": [["B"]]})
        )
        .await,
        (200, json!(true))
    );
    let events = s.events.turn(&s.sid).await;
    turn.await.unwrap();
    let replied = events
        .iter()
        .find(|e| e["type"] == "question.replied")
        .unwrap();
    assert_eq!(replied["properties"]["answers"], json!([["B"]]));
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "message.part.delta")
        .map(|e| e["properties"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Answered: B");

    let turn = s.prompt_async(text_prompt("ask again"));
    let asked = s.wait_for("question.asked").await;
    let id = asked["id"].as_str().unwrap();
    assert_eq!(
        post(&s.agent.url(&format!("/question/{id}/reject")), json!({})).await,
        (200, json!(true))
    );
    let events = s.events.turn(&s.sid).await;
    turn.await.unwrap();
    assert!(types(&events).contains(&"question.rejected".to_string()));
    let tool = events
        .iter()
        .rev()
        .find(|e| e["properties"]["part"]["type"] == "tool")
        .unwrap();
    assert_eq!(tool["properties"]["part"]["state"]["status"], "error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_blocked_once_answers_a_blocked_decision_once() {
    let mut s = setup(&[Fault::BlockedOnce]).await;
    let first = final_assistant(&s.turn(decision_prompt()).await);
    assert_eq!(
        first["structured"],
        json!({"decision": "blocked", "reason": "Release target is missing"})
    );
    assert!(first["error"].is_null());
    let second = final_assistant(&s.turn(decision_prompt()).await);
    assert_eq!(second["structured"]["decision"], "advance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_invalid_output_once_and_always() {
    let mut s = setup(&[Fault::InvalidOutputOnce]).await;
    assert_eq!(
        final_assistant(&s.turn(decision_prompt()).await)["structured"],
        json!({"decision": "unknown"})
    );
    assert_eq!(
        final_assistant(&s.turn(decision_prompt()).await)["structured"]["decision"],
        "advance"
    );

    s.control.inject(Fault::InvalidOutputAlways).unwrap();
    let path_prompt = json!({"parts": [{"type": "text", "text": "pick"}], "format": {"type": "json_schema",
        "schema": {"type": "object", "properties": {"path": {"type": "string", "enum": ["src/lib.rs"]}},
                   "required": ["path"], "additionalProperties": false}}});
    for _ in 0..2 {
        let info = final_assistant(&s.turn(path_prompt.clone()).await);
        assert_eq!(info["structured"], json!({"fixture_invalid": true}));
        assert!(info["error"].is_null());
    }
    s.control.clear(&Fault::InvalidOutputAlways).unwrap();
    let info = final_assistant(&s.turn(path_prompt).await);
    assert_eq!(info["structured"], json!({"path": "src/lib.rs"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_remaining_passes_iterates_then_advances() {
    let mut s = setup(&[Fault::RemainingPasses(2)]).await;
    let mut decisions = Vec::new();
    for _ in 0..3 {
        let info = final_assistant(&s.turn(decision_prompt()).await);
        decisions.push(info["structured"]["decision"].as_str().unwrap().to_string());
    }
    assert_eq!(decisions, ["iterate", "iterate", "advance"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_disconnect_after_tool_ends_the_stream_after_the_tool() {
    let mut s = setup(&[Fault::DisconnectAfterTool]).await;
    let url = s.agent.url(&format!("/session/{}/message", s.sid));
    // Blocking prompt: the turn's result still arrives after the stream is gone.
    let blocking = tokio::spawn(async move { post(&url, text_prompt("tool please")).await });
    let (seen, ended) = s.events.until(ceiling(10.0), |_| false).await;
    assert!(ended, "the event stream must end");
    let last = seen
        .iter()
        .rev()
        .find(|e| e["type"] != "server.heartbeat")
        .unwrap();
    assert_eq!(last["type"], "message.part.updated");
    assert_eq!(last["properties"]["part"]["state"]["status"], "completed");
    let (status, reply) = blocking.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(reply["info"]["finish"], "stop");
    assert!(s.control.tool_effect_completed());
    let messages = get(&s.agent.url(&format!("/session/{}/message", s.sid)))
        .await
        .1;
    assert!(
        messages[1]["info"]["time"]["completed"].is_u64(),
        "recoverable by reading messages"
    );
    // A new subscription works.
    let _again = Events::subscribe(&s.agent).await;
}
