//! The fixture agent answers the routes the harness uses with the real server's shapes, emits the
//! real turn's event sequence, persists sessions across a restart, and records launches.

mod fixture_common;

use fixture_common::schema::Shapes;
use fixture_common::*;
use reqwest::Method;
use serde_json::{Value, json};

#[test]
fn fixture_shape_checker_accepts_real_recordings_and_rejects_drift() {
    let shapes = Shapes::load();
    let messages: Value =
        serde_json::from_str(include_str!("data/fixture/real-messages-after-prompt.json")).unwrap();
    shapes
        .check_route("GET /session/{sessionID}/message", 200, &messages)
        .unwrap();
    let structured: Value =
        serde_json::from_str(include_str!("data/fixture/real-structured-sync.json")).unwrap();
    shapes
        .check_route("POST /session/{sessionID}/message", 200, &structured)
        .unwrap();
    let mut checked = 0;
    for line in include_str!("data/fixture/real-events.sse").lines() {
        let event: Value = serde_json::from_str(line.strip_prefix("data: ").unwrap()).unwrap();
        shapes.check_event(&event).unwrap();
        checked += 1;
    }
    assert!(checked > 500);

    // The checker must be able to fail: drift in each direction is caught.
    let mut missing = messages.clone();
    missing[1]["info"]
        .as_object_mut()
        .unwrap()
        .remove("parentID");
    assert!(
        shapes
            .check_route("GET /session/{sessionID}/message", 200, &missing)
            .is_err()
    );
    let mut extra = structured.clone();
    extra["info"]["structured_output"] = json!({});
    assert!(
        shapes
            .check_route("POST /session/{sessionID}/message", 200, &extra)
            .is_err()
    );
    let bad_id = json!({"id": "abc", "type": "session.idle", "properties": {"sessionID": "ses_x"}});
    assert!(shapes.check_event(&bad_id).is_err());
    let bad_type = json!([{"id": 1}]);
    assert!(shapes.check_route("GET /session", 200, &bad_type).is_err());
}

#[test]
fn fixture_version_prints_a_version_line() {
    let out = std::process::Command::new(BIN)
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1.18.33+fixture\n");
}

/// A bad value of one of the agent's variables stops it at start, naming the variable, instead
/// of being replaced by a default in silence.
#[test]
fn fixture_refuses_an_invalid_variable_at_start() {
    let home = tempfile::tempdir().unwrap();
    for (name, value, message) in [
        (
            "LIVE_FIXTURE_HEARTBEAT_MS",
            "0",
            "LIVE_FIXTURE_HEARTBEAT_MS must be a positive number of milliseconds such as 200",
        ),
        (
            "LIVE_FIXTURE_HEARTBEAT_MS",
            " 200",
            "LIVE_FIXTURE_HEARTBEAT_MS has leading or trailing whitespace",
        ),
        ("LIVE_FIXTURE_RUN_ID", "", "LIVE_FIXTURE_RUN_ID is empty"),
        (
            "LIVE_FIXTURE_WAIT_STDIN",
            "sure",
            "LIVE_FIXTURE_WAIT_STDIN must be 1, true or yes",
        ),
    ] {
        let out = std::process::Command::new(BIN)
            .args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
            .env("HOME", home.path())
            .env(name, value)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}={value:?}: {stderr}");
        assert!(stderr.contains(message), "{name}={value:?}: {stderr}");
        assert!(out.stdout.is_empty(), "it never listened");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_routes_answer_with_real_shapes() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let shapes = Shapes::load();
    let check = |route: &str, (status, body): (u16, Value)| {
        shapes
            .check_route(route, status, &body)
            .unwrap_or_else(|e| panic!("{e}\nbody: {body}"));
        body
    };

    let health = check(
        "GET /global/health",
        get(&agent.url("/global/health")).await,
    );
    assert_eq!(health["healthy"], true);

    let session = check(
        "POST /session",
        post(
            &agent.url("/session?directory=/tmp/ws"),
            json!({"title": "shapes"}),
        )
        .await,
    );
    assert_eq!(session["title"], "shapes");
    assert_eq!(session["directory"], "/tmp/ws");
    let sid = session["id"].as_str().unwrap().to_string();
    let second = check(
        "POST /session",
        post(&agent.url("/session"), json!({})).await,
    );

    let list = check("GET /session", get(&agent.url("/session")).await);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&sid.as_str()) && ids.contains(&second["id"].as_str().unwrap()));

    let one = check(
        "GET /session/{sessionID}",
        get(&agent.url(&format!("/session/{sid}"))).await,
    );
    assert_eq!(one["id"], sid);
    check(
        "GET /session/{sessionID}",
        get(&agent.url("/session/ses_unknown")).await,
    );
    let (status, _) = get(&agent.url("/session/ses_unknown")).await;
    assert_eq!(status, 404);

    let patched = check(
        "PATCH /session/{sessionID}",
        call(
            Method::PATCH,
            &agent.url(&format!("/session/{sid}")),
            Some(json!({"title": "renamed"})),
        )
        .await,
    );
    assert_eq!(patched["title"], "renamed");
    let (status, _) = call(Method::PATCH, &agent.url("/config"), Some(json!({}))).await;
    assert_eq!(status, 200, "other PATCHes are no-ops");

    let reply = check(
        "POST /session/{sessionID}/message",
        post(
            &agent.url(&format!("/session/{sid}/message")),
            text_prompt("Say hello"),
        )
        .await,
    );
    assert_eq!(reply["info"]["role"], "assistant");
    assert_eq!(reply["info"]["finish"], "stop");
    let text: Vec<&str> = reply["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "text")
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, ["Fixture completed."]);

    let messages = check(
        "GET /session/{sessionID}/message",
        get(&agent.url(&format!("/session/{sid}/message"))).await,
    );
    let roles: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["info"]["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(messages[0]["parts"][0]["text"], "Say hello");

    let response = http()
        .post(agent.url(&format!("/session/{sid}/prompt_async")))
        .json(&text_prompt("again"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    assert!(response.text().await.unwrap().is_empty());
    let (status, body) = post(
        &agent.url("/session/ses_unknown/prompt_async"),
        text_prompt("x"),
    )
    .await;
    check("POST /session/{sessionID}/prompt_async", (status, body));
    assert_eq!(status, 404);

    let statuses = check(
        "GET /session/status",
        get(&agent.url("/session/status")).await,
    );
    assert!(statuses.is_object());
    let aborted = check(
        "POST /session/{sessionID}/abort",
        post(&agent.url(&format!("/session/{sid}/abort")), json!({})).await,
    );
    assert_eq!(aborted, true);

    assert_eq!(
        check("GET /permission", get(&agent.url("/permission")).await),
        json!([])
    );
    let (status, body) = post(
        &agent.url("/permission/per_unknown/reply"),
        json!({"reply": "once"}),
    )
    .await;
    assert_eq!(status, 404);
    check("POST /permission/{requestID}/reply", (status, body));
    let (status, body) = post(
        &agent.url(&format!("/session/{sid}/permissions/per_unknown")),
        json!({"response": "once"}),
    )
    .await;
    assert_eq!(status, 404);
    check(
        "POST /session/{sessionID}/permissions/{permissionID}",
        (status, body),
    );
    assert_eq!(
        check("GET /question", get(&agent.url("/question")).await),
        json!([])
    );
    let (status, body) = post(
        &agent.url("/question/que_unknown/reply"),
        json!({"answers": [["A"]]}),
    )
    .await;
    assert_eq!(status, 404);
    check("POST /question/{requestID}/reply", (status, body));
    let (status, body) = post(&agent.url("/question/que_unknown/reject"), json!({})).await;
    assert_eq!(status, 404);
    check("POST /question/{requestID}/reject", (status, body));

    assert_eq!(
        check(
            "POST /instance/dispose",
            post(&agent.url("/instance/dispose"), json!({})).await
        ),
        true
    );
    assert_eq!(
        get(&agent.url("/global/health")).await.0,
        200,
        "dispose keeps the process"
    );

    // A `format` prompt makes the real server answer 400 to the messages route; so does the fixture.
    // Its body is not the documented `_tag` shape but `{name, data: {kind, message}}`, naming the
    // format that failed to decode (recorded in tests/conformance/transcripts/structured__*).
    let structured = check(
        "POST /session/{sessionID}/message",
        post(
            &agent.url(&format!(
                "/session/{}/message",
                second["id"].as_str().unwrap()
            )),
            decision_prompt(),
        )
        .await,
    );
    assert_eq!(structured["info"]["structured"]["decision"], "advance");
    let quirk = get(&agent.url(&format!(
        "/session/{}/message",
        second["id"].as_str().unwrap()
    )))
    .await;
    assert_eq!(quirk.0, 400);
    assert_eq!(quirk.1["name"], "BadRequest", "{}", quirk.1);
    assert_eq!(quirk.1["data"]["kind"], "Body", "{}", quirk.1);
    let message = quirk.1["data"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Expected OutputFormatJsonSchema, got {\"type\":\"json_schema\"")
            && message.ends_with("\"retryCount\":2}\n  at [0][\"info\"][\"format\"]"),
        "{message}"
    );

    let deleted = check(
        "DELETE /session/{sessionID}",
        call(Method::DELETE, &agent.url(&format!("/session/{sid}")), None).await,
    );
    assert_eq!(deleted, true);
    assert_eq!(get(&agent.url(&format!("/session/{sid}"))).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_prompt_turn_emits_the_real_event_sequence() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready_with(home.path(), &[("LIVE_FIXTURE_HEARTBEAT_MS", "200")]);
    let shapes = Shapes::load();
    let mut events = Events::subscribe(&agent).await;
    let sid = new_session(&agent).await;
    let turn = prompt_turn(&agent, &mut events, &sid, text_prompt("Say hello")).await;
    for event in &turn {
        shapes
            .check_event(event)
            .unwrap_or_else(|e| panic!("{e}\nevent: {event}"));
    }
    let kinds = types(&turn);
    // The real server's order (r2-ev_perm.sse, a text turn), as a subsequence.
    let expected = [
        "session.created",
        "message.updated",      // user
        "message.part.updated", // user text
        "session.status",       // busy
        "message.updated",      // assistant, started
        "message.part.updated", // step-start
        "message.part.updated", // text ""
        "message.part.delta",
        "message.part.delta",
        "message.part.updated", // text complete
        "message.part.updated", // step-finish
        "message.updated",      // assistant, completed
        "session.status",       // idle
        "session.idle",
    ];
    let mut rest = kinds.iter();
    for want in expected {
        assert!(
            rest.any(|k| k == want),
            "missing {want} in order; got {kinds:?}"
        );
    }
    let busy = turn.iter().find(|e| e["type"] == "session.status").unwrap();
    assert_eq!(busy["properties"]["status"]["type"], "busy");
    let deltas: String = turn
        .iter()
        .filter(|e| e["type"] == "message.part.delta")
        .map(|e| e["properties"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "Fixture completed.");
    let done = final_assistant(&turn);
    assert!(done["time"]["completed"].is_u64());
    assert!(done.get("error").is_none());
    let idle = turn
        .iter()
        .rev()
        .find(|e| e["type"] == "session.status")
        .unwrap();
    assert_eq!(idle["properties"]["status"]["type"], "idle");
    let ids: Vec<&str> = turn.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert!(ids.iter().all(|i| {
        regex::Regex::new(r"^evt_[0-9a-f]{12}[0-9A-Za-z]{14}$")
            .unwrap()
            .is_match(i)
    }));
    assert_eq!(get(&agent.url("/session/status")).await.1, json!({}));

    let (beats, ended) = events
        .until(ceiling(5.0), |e| e["type"] == "server.heartbeat")
        .await;
    assert!(!ended);
    shapes.check_event(beats.last().unwrap()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_sessions_persist_across_restart() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let sid = new_session(&agent).await;
    let (status, _) = post(
        &agent.url(&format!("/session/{sid}/message")),
        text_prompt("remember me"),
    )
    .await;
    assert_eq!(status, 200);
    let before = get(&agent.url(&format!("/session/{sid}/message"))).await.1;
    let session = get(&agent.url(&format!("/session/{sid}"))).await.1;
    agent.stop();

    let agent = Agent::ready(home.path());
    assert_eq!(
        get(&agent.url(&format!("/session/{sid}"))).await,
        (200, session)
    );
    assert_eq!(
        get(&agent.url(&format!("/session/{sid}/message"))).await,
        (200, before)
    );
    let list = get(&agent.url("/session")).await.1;
    assert_eq!(list.as_array().unwrap().len(), 1);
    let launched = std::fs::read_to_string(home.path().join("launched")).unwrap();
    assert_eq!(launched.lines().count(), 1, "one turn, one launch record");
}

#[test]
fn fixture_run_mode_creates_a_session_and_records_the_launch() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(BIN)
        .args(["run", "hello"])
        .env("HOME", home.path())
        .env("LIVE_FIXTURE_RUN_ID", "run42")
        .env("LIVE_FIXTURE_AS", "planner")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("message=created id=ses_run42"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("launched")).unwrap(),
        "run42\n"
    );
    let declaration: Value = serde_json::from_str(
        std::fs::read_to_string(home.path().join("declarations"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    assert_eq!(declaration, json!({"capture": "run42", "as": "planner"}));
    let control = harness_runtime::fixture::FixtureControl::attached_to(home.path()).unwrap();
    assert_eq!(control.launches(), ["run42"]);
}
