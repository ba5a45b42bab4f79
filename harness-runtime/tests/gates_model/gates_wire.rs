//! Wire and product gate points: spellings checked against OpenCode's API, arming counted per
//! point from its arming, product points passed from the product's own code, unreached gates.
//! (The forwarder's passes at wire points are unit tests of the crate: they are crate-private.)

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use harness_runtime::gates::{
    EventType, GateError, GatePoint, Gates, Point, RoutePattern, WirePoint,
};

const CEILING: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(CEILING, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {CEILING:?}"))
}

#[test]
fn wire_points_round_trip_through_their_spelling() {
    for spelling in [
        "request POST /session/{id}/abort",
        "request POST /permission/{id}/reply",
        "request POST /session/{sessionID}/prompt_async",
        "response GET /session/{id}/message/{messageID}",
        "response GET /session/status",
        "request GET /api/fs/read/*",
        "event permission.asked",
        "event session.idle",
        "event message.part.updated",
        "event server.heartbeat",
    ] {
        let point = WirePoint::parse(spelling).unwrap();
        assert_eq!(point.to_string(), spelling);
        assert_eq!(spelling.parse::<WirePoint>().unwrap(), point);
    }
    let WirePoint::Response(route) = WirePoint::parse("response POST /session/{id}/abort").unwrap()
    else {
        panic!("a response point");
    };
    assert_eq!(
        (route.method(), route.path()),
        ("POST", "/session/{id}/abort")
    );
    assert_eq!(
        route,
        RoutePattern::parse("POST /session/{id}/abort").unwrap()
    );
    let WirePoint::Event(kind) = WirePoint::parse("event session.idle").unwrap() else {
        panic!("an event point");
    };
    assert_eq!(kind, EventType::parse("session.idle").unwrap());
    assert_eq!(kind.as_str(), "session.idle");
}

#[test]
fn bad_spellings_name_themselves_and_what_is_wrong() {
    let error = |spelling: &str| WirePoint::parse(spelling).unwrap_err();

    let placeholder = error("request POST /session/{sessionId}/abort");
    assert!(
        matches!(&placeholder, GateError::UnknownPlaceholder { placeholder, .. } if placeholder == "sessionId")
    );
    assert_eq!(
        placeholder.to_string(),
        "`request POST /session/{sessionId}/abort` has an unknown placeholder `{sessionId}`: \
         use `{id}` or one of OpenCode's own: `{attemptID}`, `{credentialID}`, \
         `{integrationID}`, `{messageID}`, `{name}`, `{partID}`, `{permissionID}`, \
         `{projectID}`, `{providerID}`, `{ptyID}`, `{requestID}`, `{sessionID}`"
    );

    let route = error("request POST /session/{id}/abrt");
    assert!(
        matches!(&route, GateError::NoSuchRoute { nearest, .. } if nearest == "POST /session/{sessionID}/abort")
    );
    assert_eq!(
        route.to_string(),
        "`request POST /session/{id}/abrt` fits no route of OpenCode 1.18.33 (the nearest is \
         `POST /session/{sessionID}/abort`): write its method and path, a `{...}` segment \
         standing for any of its placeholders"
    );
    // The method is part of the route.
    assert!(matches!(
        error("request GET /session/{id}/abort"),
        GateError::NoSuchRoute { nearest, .. } if nearest == "POST /session/{sessionID}/abort"
    ));
    // A literal where OpenCode has a placeholder is another route.
    assert!(matches!(
        error("request POST /session/ses_1/abort"),
        GateError::NoSuchRoute { .. }
    ));

    let event = error("event permission.askd");
    assert_eq!(
        event.to_string(),
        "`event permission.askd` names no event type of OpenCode 1.18.33 (the nearest is \
         `permission.asked`)"
    );

    for (spelling, reason) in [
        (
            "request",
            "expected `request <METHOD> <route>`, such as `request POST /session/{id}/abort`",
        ),
        (
            "request POST",
            "expected `request <METHOD> <route>`, such as `request POST /session/{id}/abort`",
        ),
        (
            "response POST  /session",
            "expected `response <METHOD> <route>`, such as `response POST /session/{id}/abort`",
        ),
        (
            "request post /session",
            "the method `post` must be uppercase: `POST`",
        ),
        ("request P0ST /session", "`P0ST` is not an HTTP method"),
        (
            "request POST session",
            "the route `session` does not start with `/`",
        ),
        (
            "request GET /session?directory=/x",
            "the route `/session?directory=/x` has a query string: gate on the path alone, without `?`",
        ),
        (
            "request GET /session/",
            "the route `/session/` has an empty segment: no `//`, no trailing `/`",
        ),
        (
            "request POST /session/{}/abort",
            "the segment `{}` is not a placeholder: write `{id}` or OpenCode's name",
        ),
        (
            "request POST /session/x{id}/abort",
            "the segment `x{id}` mixes a placeholder with text: a placeholder is a whole segment, such as `{id}`",
        ),
        (
            "event",
            "expected `event <type>`, such as `event permission.asked`",
        ),
        (
            "event permission asked",
            "expected `event <type>`, such as `event permission.asked`",
        ),
        (
            "abort",
            "expected `request <METHOD> <route>`, `response <METHOD> <route>` or `event <type>`",
        ),
        (
            "product before_save",
            "expected `request <METHOD> <route>`, `response <METHOD> <route>` or `event <type>`",
        ),
    ] {
        let error = error(spelling);
        assert_eq!(
            error,
            GateError::MalformedPoint {
                spelling: spelling.to_owned(),
                reason: reason.to_owned()
            },
            "{spelling}"
        );
        assert_eq!(
            error.to_string(),
            format!("`{spelling}` is malformed: {reason}")
        );
    }
}

#[test]
fn a_route_pattern_alone_is_spelled_without_its_kind() {
    let error = RoutePattern::parse("POST /session/{id}/abrt").unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("`POST /session/{id}/abrt` fits no route"),
        "{error}"
    );
    assert_eq!(
        RoutePattern::parse("POST").unwrap_err().to_string(),
        "`POST` is malformed: expected `<METHOD> <route>`, such as `POST /session/{id}/abort`"
    );
    assert_eq!(
        EventType::parse("session.idel").unwrap_err().to_string(),
        "`session.idel` names no event type of OpenCode 1.18.33 (the nearest is `session.idle`)"
    );
}

#[test]
fn route_patterns_match_requests_by_segments() {
    let reply = RoutePattern::parse("POST /permission/{id}/reply").unwrap();
    assert!(reply.matches("POST", "/permission/per_1/reply"));
    assert!(reply.matches("POST", "/permission/per_1/reply?directory=%2Ftmp"));
    assert!(!reply.matches("GET", "/permission/per_1/reply"));
    assert!(!reply.matches("post", "/permission/per_1/reply"));
    assert!(!reply.matches("POST", "/permission//reply"));
    assert!(!reply.matches("POST", "/permission/per_1/reply/x"));
    assert!(!reply.matches("POST", "/permission/per_1"));
    assert!(!reply.matches("POST", "permission/per_1/reply"));
    // OpenCode's literal route is not the placeholder's.
    let session = RoutePattern::parse("GET /session/{id}").unwrap();
    assert!(session.matches("GET", "/session/ses_1"));
    assert!(!session.matches("GET", "/session/status"));
}

#[test]
fn from_names_takes_every_form_and_rejects_duplicates() {
    let gates = Gates::from_names(&[
        "abort",
        "request POST /session/{id}/abort",
        "response POST /session/{id}/abort",
        "event permission.asked",
        "product before_save",
    ])
    .unwrap();
    assert!(gates.gate(GatePoint::BeforeAbort).is_some());
    let request = WirePoint::parse("request POST /session/{id}/abort").unwrap();
    assert_eq!(
        gates.gate(&request).unwrap().name(),
        "request POST /session/{id}/abort"
    );
    assert!(gates.gate(&request).unwrap().point().is_none());
    let product = gates.gate(Point::product("before_save").unwrap()).unwrap();
    assert_eq!(product.name(), "product before_save");
    assert!(gates.gate(Point::product("after_save").unwrap()).is_none());
    // Client points are not the runner's business here: they keep today's behaviour.
    assert_eq!(
        gates.unreached(),
        [
            "request POST /session/{id}/abort",
            "response POST /session/{id}/abort",
            "event permission.asked",
            "product before_save"
        ]
    );

    let twice = Gates::from_names(&["event session.idle", "event session.idle"]).unwrap_err();
    assert_eq!(
        twice,
        GateError::DuplicatePoint {
            name: "event session.idle".to_owned()
        }
    );
    assert!(matches!(
        Gates::from_names(&["request POST /session/{id}/abrt"]),
        Err(GateError::NoSuchRoute { .. })
    ));
    assert_eq!(
        Gates::from_names(&["product Before"])
            .unwrap_err()
            .to_string(),
        "`product Before` is not a product point name: use lowercase letters, digits, `_`, `.` \
         and `-`"
    );
}

#[test]
fn product_point_names_are_checked() {
    let gates = Gates::default();
    for good in ["before_save", "a", "v1.2-x_y"] {
        assert_eq!(gates.product_point(good).unwrap().name(), good);
        assert!(Point::product(good).is_ok());
    }
    for bad in ["", "Before", "before save", "before/save", "é"] {
        let error = gates.product_point(bad).unwrap_err();
        assert_eq!(
            error,
            GateError::BadProductName {
                spelling: bad.to_owned()
            }
        );
        assert!(Point::product(bad).is_err());
    }
}

#[test]
fn a_product_point_can_be_handed_to_any_task() {
    fn handle<T: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    fn future<F: std::future::Future + Send + 'static>(_: F) {}
    handle::<harness_runtime::gates::ProductPoint>();
    handle::<WirePoint>();
    let point = Gates::default().product_point("p").unwrap();
    future(async move { point.pass().await });
}

#[tokio::test]
async fn an_unarmed_product_point_passes_at_once() {
    let gates = Gates::default();
    let point = gates.product_point("hot_path").unwrap();
    // Another product point armed: this one still takes the fast path.
    let _elsewhere = gates.arm(Point::product("elsewhere").unwrap());
    let started = Instant::now();
    for _ in 0..100_000 {
        assert_eq!(point.pass().now_or_never(), Some(()));
    }
    let elapsed = started.elapsed();
    // Generous for a debug build on a loaded machine; a lock per pass would show far above.
    assert!(
        elapsed < Duration::from_secs(1),
        "1e5 un-armed passes took {elapsed:?}"
    );
    assert_eq!(
        format!("{point:?}"),
        r#"ProductPoint { name: "hot_path", armed: false }"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_product_point_pauses_the_product_until_released() {
    for run in 0..50 {
        let gates = Gates::default();
        // The handle is made before arming and outlives the borrow it came from.
        let point = gates.product_point("before_save").unwrap();
        let gate = gates.arm(Point::product("before_save").unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let product = tokio::spawn({
            let point = point.clone();
            let log = log.clone();
            async move {
                point.pass().await;
                log.lock().unwrap().push("saved");
            }
        });
        within(
            "the product entering",
            gate.wait_until_entered_within(CEILING),
        )
        .await
        .unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        log.lock().unwrap().push("scenario acted");
        assert!(!product.is_finished(), "run {run}");
        gate.release();
        within("the product", product).await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["scenario acted", "saved"],
            "run {run}"
        );
        assert!(gates.unreached().is_empty());
        // Released for good: later passes go through.
        assert_eq!(point.pass().now_or_never(), Some(()));
    }
}

#[tokio::test]
async fn product_passes_count_from_arming() {
    let gates = Gates::default();
    let point = gates.product_point("step").unwrap();
    // Passes before arming do not count.
    for _ in 0..3 {
        point.pass().await;
    }
    let second = gates.arm_nth(
        Point::product("step").unwrap(),
        std::num::NonZeroU32::new(2).unwrap(),
    );
    assert!(Arc::ptr_eq(
        &second,
        &gates.arm_nth(
            Point::product("step").unwrap(),
            std::num::NonZeroU32::new(2).unwrap()
        )
    ));
    // A handle made later, and a clone, are the same point.
    let other = gates.product_point("step").unwrap().clone();
    assert_eq!(other.pass().now_or_never(), Some(()));
    assert!(!second.is_entered());
    let mut paused = Box::pin(point.pass());
    assert!((&mut paused).now_or_never().is_none());
    assert!(second.is_entered());
    // Arming again counts from now: the next pass, which is the third since the first arming.
    let next = gates.arm(Point::product("step").unwrap());
    assert!(!Arc::ptr_eq(&next, &second));
    assert!(Arc::ptr_eq(
        &next,
        &gates.gate(Point::product("step").unwrap()).unwrap()
    ));
    let error = next
        .wait_until_entered_within(Duration::from_millis(20))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, GateError::NeverEntered { gate, detail, .. }
            if gate == "product step"
                && detail == "armed for pass 1 after arming; the point was passed 0 time(s) since"),
        "{error:?}"
    );
    assert_eq!(gates.unreached(), ["product step"]);
    second.release();
    assert_eq!(paused.now_or_never(), Some(()));
    let mut third = Box::pin(point.pass());
    assert!((&mut third).now_or_never().is_none());
    assert!(next.is_entered());
    next.release();
    assert_eq!(third.now_or_never(), Some(()));
    assert!(gates.unreached().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_all_opens_wire_and_product_gates_for_good() {
    let gates = Gates::from_names(&["product held", "event session.idle"]).unwrap();
    let point = gates.product_point("held").unwrap();
    let held = gates.gate(Point::product("held").unwrap()).unwrap();
    let product = tokio::spawn({
        let point = point.clone();
        async move { point.pass().await }
    });
    within("the product entering", held.wait_until_entered()).await;
    gates.release_all();
    within("the product after release_all", product)
        .await
        .unwrap();
    let idle = WirePoint::parse("event session.idle").unwrap();
    assert!(gates.gate(&idle).unwrap().is_released());
    // Never entered, even though released: still unreached.
    assert_eq!(gates.unreached(), ["event session.idle"]);
    // Arming after teardown began yields an open gate.
    assert!(gates.arm(Point::product("held").unwrap()).is_released());
    assert!(gates.arm(&idle).is_released());
    assert_eq!(point.pass().now_or_never(), Some(()));
}

/// A scenario context armed with `gates` by the attribute, as the runner makes one.
fn live_armed(gates: &'static [&'static str]) -> harness_runtime::Live {
    use harness_runtime::__private::ScenarioOptions;
    use harness_runtime::testing::{self, ScenarioInfo};
    testing::live(ScenarioInfo {
        name: "gates_wire::unreached".to_string(),
        options: ScenarioOptions {
            gates,
            ..ScenarioOptions::DEFAULT
        },
        manifest_dir: std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
    })
}

#[tokio::test]
async fn a_wire_or_product_gate_never_reached_fails_a_passing_scenario_naming_it() {
    use harness_runtime::testing::{self, FinishError};
    let mut live = live_armed(&[
        "request POST /session/{id}/abort",
        "product approve",
        "abort",
    ]);
    let err = testing::finish(&mut live, true).await.unwrap_err();
    let FinishError::UnreachedGates(named) = &err else {
        panic!("expected unreached gates, got {err:?}");
    };
    // Wire and product gates are named by their spelling; client points are not judged.
    assert_eq!(
        named,
        "`request POST /session/{id}/abort`, `product approve`"
    );
    assert!(err.to_string().contains("forwarded_url"), "{err}");

    // Reached gates, and a body that already failed, end without it.
    let mut live = live_armed(&["product approve"]);
    let point = live.gates().product_point("approve").unwrap();
    let gate = live
        .gates()
        .gate(Point::product("approve").unwrap())
        .unwrap();
    let passing = tokio::spawn(async move { point.pass().await });
    gate.wait_until_entered_within(Duration::from_secs(10))
        .await
        .unwrap();
    gate.release();
    passing.await.unwrap();
    testing::finish(&mut live, true).await.unwrap();
    let mut live = live_armed(&["product approve"]);
    testing::finish(&mut live, false).await.unwrap();
}
