//! The comparison itself: a transcript that differs in one field fails naming the step, its
//! route, the field and both values.

use harness_runtime::prelude::*;
use serde_json::json;

use crate::transcript::{Step, Transcript, first_difference};

fn call(request: &str, status: u16, answer: serde_json::Value) -> Step {
    Step::Call {
        request: request.to_owned(),
        body: None,
        status,
        answer,
    }
}

/// One changed field of one answer (a status code, an event type, a nested property) is
/// found and named; equal transcripts have no difference.
#[live_agent_test]
async fn one_changed_field_is_named_with_both_values(_live: &mut Live) -> anyhow::Result<()> {
    let reference = Transcript {
        steps: vec![
            call(
                "POST /session",
                200,
                json!({"id": "[session-1]", "time": {"created": "[timestamp]"}}),
            ),
            Step::Events {
                until: "session.idle".into(),
                types: vec!["session.status".into(), "session.idle".into()],
            },
            call(
                "GET /session/[session-1]",
                200,
                json!({"id": "[session-1]", "title": "t"}),
            ),
        ],
    };
    anyhow::ensure!(first_difference(&reference, &reference.clone()).is_none());

    let mut status = reference.clone();
    if let Step::Call { status, .. } = &mut status.steps[2] {
        *status = 404;
    }
    let difference = first_difference(&reference, &status).expect("a status differs");
    anyhow::ensure!(
        difference.to_string()
            == "step 3 `GET /session/[session-1]`, field `/status`: expected 200, got 404",
        "{difference}"
    );

    let mut event = reference.clone();
    if let Step::Events { types, .. } = &mut event.steps[1] {
        types[0] = "session.state".into();
    }
    let difference = first_difference(&reference, &event).expect("an event type differs");
    anyhow::ensure!(
        difference.to_string()
            == "step 2 `events until session.idle`, field `/types/0`: expected \
                \"session.status\", got \"session.state\"",
        "{difference}"
    );

    let mut nested = reference.clone();
    if let Step::Call { answer, .. } = &mut nested.steps[0] {
        answer["time"]["archived"] = json!(1);
        answer["time"].as_object_mut().unwrap().remove("created");
    }
    let difference = first_difference(&reference, &nested).expect("a field differs");
    anyhow::ensure!(
        difference.to_string()
            == "step 1 `POST /session`, field `/answer/time/archived`: expected nothing, got 1",
        "{difference}"
    );

    let mut shorter = reference.clone();
    shorter.steps.pop();
    let difference = first_difference(&reference, &shorter).expect("a step is missing");
    anyhow::ensure!(
        difference.step == 2 && difference.actual.is_none(),
        "{difference}"
    );
    Ok(())
}

/// A deliberate difference sets aside the fields its pattern matches where they differ (and,
/// when it names the fixture's value, only where the fixture has that value); one that matches
/// fields that no longer differ fails.
#[live_agent_test]
async fn deliberate_differences_set_aside_only_what_they_name(
    _live: &mut Live,
) -> anyhow::Result<()> {
    use crate::differences::Deliberate;
    use crate::reference::set_aside;

    let session = |version: &str| json!({"id": "[session-1]", "version": version});
    let transcript = |version: &str| Transcript {
        steps: vec![
            call("POST /session", 200, session(version)),
            call(
                "GET /session",
                200,
                json!([session(version), session(version)]),
            ),
        ],
    };
    let mark = [
        Deliberate {
            interaction: "*",
            field: "/steps/*/answer/version",
            fixture: Some("1.18.33+fixture"),
            why: "the mark",
        },
        Deliberate {
            interaction: "*",
            field: "/steps/*/answer/*/version",
            fixture: Some("1.18.33+fixture"),
            why: "the mark",
        },
    ];
    let real = transcript("1.18.33");
    let (expected, actual) = set_aside(mark.iter(), &real, &transcript("1.18.33+fixture"))?;
    anyhow::ensure!(first_difference(&expected, &actual).is_none());

    // Another value than the one listed is still a difference.
    let (expected, actual) = set_aside(mark.iter(), &real, &transcript("1.17.0"))?;
    let difference = first_difference(&expected, &actual).expect("1.17.0 is no mark");
    anyhow::ensure!(difference.field == "/answer/version", "{difference}");

    // Listed, yet equal: the list must shrink.
    let stale = set_aside(mark.iter(), &real, &real)
        .unwrap_err()
        .to_string();
    anyhow::ensure!(stale.contains("no longer occurs"), "{stale}");

    // A pattern that finds no such field does not apply; an exact one must find it.
    let empty = Transcript::default();
    set_aside(mark.iter(), &empty, &empty)?;
    let exact = [Deliberate {
        interaction: "sessions::create_titled",
        field: "/steps/0/answer/path",
        fixture: None,
        why: "a test",
    }];
    let missing = set_aside(exact.iter(), &empty, &empty)
        .unwrap_err()
        .to_string();
    anyhow::ensure!(missing.contains("no such field"), "{missing}");
    Ok(())
}

/// One field of one real fixture answer changed on the wire (the status of `GET
/// /session/status`, the body kept): the interaction's check fails naming the interaction,
/// the step, its route, the field and both values.
#[live_agent_test(agent = "fixture")]
async fn a_fixture_answer_changed_in_one_field_fails_naming_it(
    live: &mut Live,
) -> anyhow::Result<()> {
    live.wire().fail_once("GET /session/status", 503, "{}")?;
    let failure = crate::interaction::run(
        live,
        crate::interaction::Target::Fixture,
        "conformance::sessions::status_idle",
        crate::sessions::status_idle::body,
    )
    .await
    .expect_err("a changed status must fail the check")
    .to_string();
    anyhow::ensure!(
        failure.starts_with("`sessions::status_idle`: the fixture agent")
            && failure.ends_with(
                "at step 1 `GET /session/status`, field `/status`: expected 200, got 503"
            ),
        "{failure}"
    );
    Ok(())
}
