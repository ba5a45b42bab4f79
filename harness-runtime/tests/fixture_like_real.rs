//! What the real OpenCode 1.18.33 server does around its JSON shapes, and real clients (the SDK,
//! the CLI) rely on, done by the fixture agent too. Each expectation was measured on
//! the real server: the percent-encoded directory header, the session's `permission`, `agent` and
//! `model`, events scoped by directory, the list and message query parameters, the answer to an
//! id that is not a session id, the version and the default title.

mod fixture_common;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fixture_common::schema::Shapes;
use fixture_common::*;
use harness_runtime::fixture::{Fault, FixtureControl};
use reqwest::Method;
use serde_json::{Value, json};

fn checked(route: &str, (status, body): (u16, Value)) -> Value {
    Shapes::load()
        .check_route(route, status, &body)
        .unwrap_or_else(|e| panic!("{e}\nbody: {body}"));
    body
}

async fn create_in(agent: &Agent, header: Option<&str>, body: Value) -> Value {
    let mut request = http().post(agent.url("/session")).json(&body);
    if let Some(dir) = header {
        request = request.header("x-opencode-directory", dir);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    checked("POST /session", (status, response.json().await.unwrap()))
}

fn id(session: &Value) -> String {
    session["id"].as_str().unwrap().to_string()
}

/// Returns once the clock the agent stamps sessions with (the system's, in milliseconds) is past
/// `session`'s `time.updated`, so the next session is stamped later: a list ordered by time then
/// has one order. Milliseconds pass quickly; a clock that stands still for a second fails.
async fn after_the_clock_passes(session: &Value) {
    let stamped = session["time"]["updated"].as_u64().expect("time.updated");
    let now = || {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("the clock is after 1970");
        u64::try_from(since_epoch.as_millis()).expect("milliseconds fit in u64")
    };
    let deadline = Instant::now() + ceiling(1.0);
    while now() <= stamped {
        assert!(
            Instant::now() < deadline,
            "the system clock did not pass {stamped} ms within {:?}",
            ceiling(1.0)
        );
        tokio::task::yield_now().await;
    }
}

/// The SDK and the CLI send `x-opencode-directory` percent-encoded; the real server decodes it
/// (and resolves it: `/a/b/` is `/a/b`), so sessions and `path.cwd` read the plain path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_decodes_the_directory_header_like_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let session = create_in(&agent, Some("%2Ftmp%2Fws%20one%2F"), json!({"title": "t"})).await;
    assert_eq!(session["directory"], "/tmp/ws one");
    assert_eq!(session["path"], "tmp/ws one");
    let (status, query) = post(
        &agent.url("/session?directory=%2Ftmp%2Fws%2F..%2Fws2"),
        json!({}),
    )
    .await;
    assert_eq!((status, &query["directory"]), (200, &json!("/tmp/ws2")));

    let reply = http()
        .post(agent.url(&format!("/session/{}/message", id(&session))))
        .header("x-opencode-directory", "%2Ftmp%2Fws%20one")
        .json(&text_prompt("hi"))
        .send()
        .await
        .unwrap();
    let reply: Value = reply.json().await.unwrap();
    assert_eq!(reply["info"]["path"]["cwd"], "/tmp/ws one");
}

/// The CLI creates its session with `question: deny`: the real server then never offers the
/// question tool, so nothing is asked. A rule that denies one call fails it without asking; one
/// that allows it runs it. Sessions echo their rules, agent and model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_applies_the_sessions_permission_rules() {
    let home = tempfile::tempdir().unwrap();
    let control = FixtureControl::attached_to(home.path()).unwrap();
    control.inject(Fault::DecideWithin(ceiling(10.0))).unwrap();
    control.inject(Fault::AskQuestion).unwrap();
    let agent = Agent::ready(home.path());
    let mut events = Events::subscribe(&agent).await;

    let rules = json!([
        {"permission": "question", "pattern": "*", "action": "deny"},
        {"permission": "bash", "pattern": "echo *", "action": "allow"},
    ]);
    let quiet = create_in(&agent, None, json!({"title": "cli", "permission": rules})).await;
    assert_eq!(quiet["permission"], rules);
    let turn = prompt_turn(&agent, &mut events, &id(&quiet), text_prompt("hi")).await;
    let kinds = types(&turn);
    assert!(
        !kinds.contains(&"question.asked".into()) && !kinds.contains(&"permission.asked".into()),
        "nothing is asked: {kinds:?}"
    );
    let (_, messages) = get(&agent.url(&format!("/session/{}/message", id(&quiet)))).await;
    let parts = &messages[1]["parts"];
    let tools: Vec<(&str, &str)> = parts
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["type"] == "tool")
        .map(|p| {
            (
                p["tool"].as_str().unwrap(),
                p["state"]["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [("bash", "completed")],
        "allowed, and no question tool"
    );
    assert!(final_assistant(&turn)["error"].is_null());
    assert_eq!(get(&agent.url("/question")).await.1, json!([]));

    let deny = json!([{"permission": "bash", "pattern": "echo *", "action": "deny"}]);
    let denied = create_in(&agent, None, json!({"title": "d", "permission": deny})).await;
    let turn = prompt_turn(&agent, &mut events, &id(&denied), text_prompt("hi")).await;
    assert!(!types(&turn).contains(&"permission.asked".into()));
    let (_, messages) = get(&agent.url(&format!("/session/{}/message", id(&denied)))).await;
    let bash = messages[1]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["tool"] == "bash")
        .expect("a bash call")
        .clone();
    assert_eq!(bash["state"]["status"], "error");
    assert_eq!(
        bash["state"]["error"],
        "The user has specified a rule which prevents you from using this specific tool call. \
         Here are some of the relevant rules \
         [{\"permission\":\"bash\",\"pattern\":\"echo *\",\"action\":\"deny\"}]"
    );

    let (status, body) = post(
        &agent.url("/session"),
        json!({"permission": [{"permission": "question", "pattern": "*", "action": "no"}]}),
    )
    .await;
    assert_eq!((status, body), (400, json!({"_tag": "BadRequest"})));
}

/// `agent` and `model` of the create body are echoed; a prompt runs on its own model, else the
/// session's, as its own agent, else `build` (the session's agent is no default), and the session
/// then records what ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_honours_the_sessions_agent_and_model() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let model = json!({"id": "m1", "providerID": "p1"});
    let session = create_in(
        &agent,
        None,
        json!({"title": "am", "agent": "plan", "model": model}),
    )
    .await;
    assert_eq!(
        (&session["agent"], &session["model"]),
        (&json!("plan"), &model)
    );
    let sid = id(&session);
    let url = agent.url(&format!("/session/{sid}/message"));
    let reply = checked(
        "POST /session/{sessionID}/message",
        post(&url, text_prompt("hi")).await,
    );
    let info = &reply["info"];
    assert_eq!(
        (
            &info["agent"],
            &info["mode"],
            &info["providerID"],
            &info["modelID"]
        ),
        (&json!("build"), &json!("build"), &json!("p1"), &json!("m1"))
    );
    let own = json!({"agent": "plan", "model": {"providerID": "p2", "modelID": "m2"},
                     "parts": [{"type": "text", "text": "again"}]});
    let reply = post(&url, own).await.1;
    assert_eq!(
        (&reply["info"]["agent"], &reply["info"]["modelID"]),
        (&json!("plan"), &json!("m2"))
    );
    let messages = checked(
        "GET /session/{sessionID}/message",
        get(&agent.url(&format!("/session/{sid}/message"))).await,
    );
    assert_eq!(
        messages[0]["info"]["model"],
        json!({"providerID": "p1", "modelID": "m1"})
    );
    assert_eq!(messages[2]["info"]["agent"], "plan");
    let after = get(&agent.url(&format!("/session/{sid}"))).await.1;
    assert_eq!(after["agent"], "plan");
    assert_eq!(
        after["model"],
        json!({"id": "m2", "providerID": "p2", "variant": "default"})
    );
}

/// A `/event` stream carries its directory's sessions only: `?directory=`, the (encoded) header,
/// else the agent's own directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_scopes_event_streams_by_directory() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let mut a = Events::subscribe_at(&agent, "/event?directory=/tmp/dir-a", None).await;
    let mut b = Events::subscribe_at(
        &agent,
        "/event",
        Some(("x-opencode-directory", "%2Ftmp%2Fdir-b")),
    )
    .await;
    let mut own = Events::subscribe(&agent).await;

    let in_a = id(&create_in(&agent, Some("/tmp/dir-a"), json!({"title": "a"})).await);
    let in_b = id(
        &post(&agent.url("/session?directory=/tmp/dir-b"), json!({}))
            .await
            .1,
    );
    let in_own = id(&create_in(&agent, None, json!({"title": "own"})).await);
    // Prompted without naming a directory: the events follow the session's directory.
    for sid in [&in_a, &in_b, &in_own] {
        let url = agent.url(&format!("/session/{sid}/message"));
        assert_eq!(post(&url, text_prompt("hi")).await.0, 200);
    }
    let dispose = agent.url("/instance/dispose?directory=/tmp/dir-a");
    assert_eq!(post(&dispose, json!({})).await.0, 200);

    let sessions_of = |events: &[Value]| -> Vec<String> {
        let mut seen: Vec<String> = events
            .iter()
            .filter_map(|e| e["properties"]["sessionID"].as_str().map(str::to_string))
            .collect();
        seen.sort();
        seen.dedup();
        seen
    };
    let (seen_a, _) = a
        .until(ceiling(10.0), |e| e["type"] == "server.instance.disposed")
        .await;
    assert_eq!(sessions_of(&seen_a), [in_a.as_str()]);
    assert!(types(&seen_a).contains(&"session.idle".into()));
    let (seen_b, _) = b
        .until(ceiling(10.0), |e| {
            e["type"] == "session.idle" && e["properties"]["sessionID"] == in_b.as_str()
        })
        .await;
    assert_eq!(sessions_of(&seen_b), [in_b.as_str()]);
    // The agent's own stream: every session created without a directory, none of the others.
    let (seen_own, _) = own
        .until(ceiling(10.0), |e| {
            e["type"] == "session.idle" && e["properties"]["sessionID"] == in_own.as_str()
        })
        .await;
    let mine = sessions_of(&seen_own);
    assert!(mine.contains(&in_own), "{mine:?}");
    assert!(!mine.contains(&in_a) && !mine.contains(&in_b), "{mine:?}");
}

/// `roots`, `start`, `search`, `limit` and `directory` on the session list, most recently
/// updated first; a bad `roots` is the real 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_session_list_honours_its_query() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let first = create_in(&agent, Some("/tmp/l1"), json!({"title": "Alpha one"})).await;
    after_the_clock_passes(&first).await;
    let child = create_in(
        &agent,
        Some("/tmp/l1"),
        json!({"title": "child of one", "parentID": id(&first)}),
    )
    .await;
    after_the_clock_passes(&child).await;
    let last = create_in(&agent, Some("/tmp/l2"), json!({"title": "Beta"})).await;
    let titles = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|s| s["title"].as_str().unwrap().to_string())
            .collect()
    };
    let list = |q: &'static str| {
        let url = agent.url(&format!("/session{q}"));
        async move { checked("GET /session", get(&url).await) }
    };
    assert_eq!(
        titles(&list("").await),
        ["Beta", "child of one", "Alpha one"]
    );
    assert_eq!(titles(&list("?roots=true").await), ["Beta", "Alpha one"]);
    assert_eq!(
        titles(&list("?roots=false&limit=2").await),
        ["Beta", "child of one"]
    );
    assert_eq!(
        titles(&list("?search=ONE").await),
        ["child of one", "Alpha one"]
    );
    assert_eq!(
        titles(&list("?directory=%2Ftmp%2Fl1%2F").await),
        ["child of one", "Alpha one"]
    );
    assert_eq!(titles(&list("?limit=0").await), Vec::<String>::new());
    assert_eq!(
        titles(&list("?limit=-1").await).len(),
        3,
        "a negative limit is none"
    );
    let start = child["time"]["updated"].as_u64().unwrap();
    let since = agent.url(&format!("/session?start={start}"));
    assert_eq!(titles(&get(&since).await.1), ["Beta", "child of one"]);
    assert_eq!(last["title"], "Beta");

    let (status, body) = get(&agent.url("/session?roots=yes")).await;
    assert_eq!(status, 400);
    assert_eq!(
        body,
        json!({"name": "BadRequest", "data": {
            "message": "Expected \"true\" | \"false\", got \"yes\"\n  at [\"roots\"]", "kind": "Query"}})
    );
}

/// `limit` keeps the newest messages; `Link`/`x-next-cursor` lead to the older ones through
/// `before`, until none remain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_messages_page_with_limit_and_before() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let sid = new_session(&agent).await;
    for text in ["m1", "m2"] {
        let url = agent.url(&format!("/session/{sid}/message"));
        assert_eq!(post(&url, text_prompt(text)).await.0, 200);
    }
    let all = get(&agent.url(&format!("/session/{sid}/message"))).await.1;
    let all_ids: Vec<Value> = all
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["info"]["id"].clone())
        .collect();
    assert_eq!(all_ids.len(), 4);

    let mut url = agent.url(&format!("/session/{sid}/message?limit=3"));
    let mut pages = Vec::new();
    loop {
        let response = http().get(&url).send().await.unwrap();
        assert_eq!(response.status(), 200);
        let headers = response.headers().clone();
        let page: Value = response.json().await.unwrap();
        checked("GET /session/{sessionID}/message", (200, page.clone()));
        pages.push(
            page.as_array()
                .unwrap()
                .iter()
                .map(|m| m["info"]["id"].clone())
                .collect::<Vec<_>>(),
        );
        let Some(link) = headers.get("link") else {
            assert!(headers.get("x-next-cursor").is_none());
            break;
        };
        let link = link.to_str().unwrap();
        let cursor = headers["x-next-cursor"].to_str().unwrap();
        assert_eq!(
            headers["access-control-expose-headers"],
            "Link, X-Next-Cursor"
        );
        let next = link
            .strip_prefix('<')
            .and_then(|l| l.strip_suffix(">; rel=\"next\""))
            .unwrap_or_else(|| panic!("a next link: {link}"));
        assert!(
            next.ends_with(&format!("?limit=3&before={cursor}")),
            "{next}"
        );
        assert!(pages.len() < 4, "the pages end");
        url = next.to_string();
    }
    assert_eq!(pages, [all_ids[1..].to_vec(), all_ids[..1].to_vec()]);

    for (query, body) in [
        ("?before=abc", json!({"_tag": "BadRequest"})),
        ("?limit=2&before=abc", json!({"_tag": "BadRequest"})),
        (
            "?limit=-1",
            json!({"name": "BadRequest", "data": {"message":
            "Expected a value greater than or equal to 0, got -1\n  at [\"limit\"]", "kind": "Query"}}),
        ),
    ] {
        let got = get(&agent.url(&format!("/session/{sid}/message{query}"))).await;
        assert_eq!(got, (400, body), "{query}");
    }
}

/// An id without the `ses` prefix is a 500 `UnknownError` with a log reference on every session
/// route of the real server (not 404, not the schema's 400); a `ses…` id that names no session
/// stays a 404.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_answers_a_non_session_id_as_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let reference = regex::Regex::new(r"^err_[0-9a-f]{8}$").unwrap();
    for (method, path) in [
        (Method::GET, "/session/not-a-session-id"),
        (Method::DELETE, "/session/not-a-session-id"),
        (Method::PATCH, "/session/x"),
        (Method::GET, "/session/not-a-session-id/message"),
        (Method::POST, "/session/not-a-session-id/message"),
        (Method::POST, "/session/not-a-session-id/prompt_async"),
        (Method::POST, "/session/not-a-session-id/abort"),
    ] {
        let (status, body) = call(method.clone(), &agent.url(path), Some(text_prompt("x"))).await;
        assert_eq!(status, 500, "{method} {path}: {body}");
        assert_eq!(body["name"], "UnknownError");
        assert_eq!(
            body["data"]["message"],
            "Unexpected server error. Check server logs for details."
        );
        assert!(
            reference.is_match(body["data"]["ref"].as_str().unwrap()),
            "{body}"
        );
    }
    let (status, body) = get(&agent.url("/session/ses_unknown")).await;
    assert_eq!(status, 404);
    checked("GET /session/{sessionID}", (status, body));
}

/// `1.18.33+fixture`: build metadata, so semver sorts it with 1.18.33, not below it as the
/// pre-release `1.18.33-fixture` was. Default titles are the real `New session - <ISO time>`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_reports_its_version_and_titles_like_the_real_server() {
    let home = tempfile::tempdir().unwrap();
    let agent = Agent::ready(home.path());
    let health = checked(
        "GET /global/health",
        get(&agent.url("/global/health")).await,
    );
    let version = health["version"].as_str().unwrap();
    let (core, build) = version.split_once('+').expect("build metadata");
    assert_eq!((core, build), ("1.18.33", "fixture"));
    assert!(!core.contains('-'), "no pre-release part");

    let iso = regex::Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$").unwrap();
    let session = create_in(&agent, None, json!({})).await;
    assert_eq!(session["version"], version);
    let title = session["title"].as_str().unwrap();
    let at = title
        .strip_prefix("New session - ")
        .unwrap_or_else(|| panic!("{title}"));
    assert!(iso.is_match(at), "{title}");
    let created = UNIX_EPOCH + Duration::from_millis(session["time"]["created"].as_u64().unwrap());
    assert_eq!(at, humantime::format_rfc3339_millis(created).to_string());
    let child = create_in(&agent, None, json!({"parentID": id(&session)})).await;
    let title = child["title"].as_str().unwrap();
    assert!(
        title
            .strip_prefix("Child session - ")
            .is_some_and(|at| iso.is_match(at)),
        "{title}"
    );
}
