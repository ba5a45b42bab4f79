//! Recorded OpenCode 1.18.33 streams through the parser and the turn collector.

use std::sync::Arc;

use harness_runtime::client::{
    Ask, AskAnswer, AskOutcome, Event, EventStream, MessageError, MessageWithParts, SessionStatus,
    StreamOptions, ToolStatus, Turn,
};
use harness_runtime::redact::Redactor;
use harness_runtime::testing::{Feed, TurnCollector};

fn recording(name: &str) -> String {
    let path = format!("{}/tests/data/streams/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
}

async fn events(name: &str) -> Vec<Event> {
    let stream = EventStream::from_recording(
        &recording(name),
        StreamOptions::default(),
        Arc::new(Redactor::for_scenario()),
    );
    let (events, err) = stream.collect_all().await;
    assert!(err.is_none(), "{name}: {err:?}");
    events
}

fn count(events: &[Event], kind: &str) -> usize {
    events.iter().filter(|e| e.type_name() == kind).count()
}

/// Feeds every event to a collector for `session` (prefix), with an empty baseline.
fn collect(events: &[Event], session: &str) -> (TurnCollector, Vec<Feed>) {
    let sid = events
        .iter()
        .filter_map(Event::session_id)
        .find(|s| s.starts_with(session))
        .unwrap_or_else(|| panic!("no session {session}"))
        .to_string();
    let mut c = TurnCollector::new(&sid, []);
    let mut feeds = Vec::new();
    for e in events {
        let f = c.feed(e);
        if let Feed::Ask(ask) = &f {
            // Record what the recorded run answered, as the driver would.
            let answer = match &**ask {
                Ask::Permission(_) => AskAnswer::LeavePending,
                Ask::Question(_) => AskAnswer::Answers(vec![vec!["A".into()]]),
            };
            c.record_answer(ask.id(), answer);
        }
        if f != Feed::Ignored && f != Feed::Recorded {
            feeds.push(f);
        }
    }
    (c, feeds)
}

fn done_turn(events: &[Event], session: &str) -> Turn {
    let (c, feeds) = collect(events, session);
    assert!(c.is_done(), "turn of {session} not done: {}", c.pending());
    assert_eq!(
        feeds.iter().filter(|f| **f == Feed::Done).count(),
        1,
        "exactly one Done"
    );
    c.finish()
}

#[tokio::test]
async fn every_recording_parses_into_typed_events() {
    let all = [
        ("r1-event.sse", 71),
        ("r1-event_abort.sse", 6),
        ("r1-event_fail.sse", 141),
        ("r2-ev_perm.sse", 331),
        ("r2-ev_q.sse", 214),
    ];
    for (name, frames) in all {
        let ev = events(name).await;
        assert_eq!(ev.len(), frames, "{name}");
        assert_eq!(ev[0], Event::ServerConnected, "{name} starts connected");
        // Noise stays Unknown, known types are never Unknown.
        for e in &ev {
            if let Event::Unknown { kind, .. } = e {
                assert!(
                    !kind.starts_with("session.")
                        && !kind.starts_with("message.")
                        && !kind.starts_with("permission.")
                        && !kind.starts_with("question."),
                    "{name}: known type left unknown: {kind}"
                );
            }
        }
    }
    let perm = events("r2-ev_perm.sse").await;
    assert_eq!(count(&perm, "permission.asked"), 3);
    assert_eq!(count(&perm, "permission.replied"), 3);
    assert_eq!(count(&perm, "question.asked"), 2);
    assert_eq!(count(&perm, "question.replied"), 1);
    assert_eq!(count(&perm, "question.rejected"), 1);
    assert!(count(&perm, "message.part.delta") >= 30);
    let r1 = events("r1-event.sse").await;
    assert!(count(&r1, "plugin.added") > 10, "noise kept as Unknown");
    let retries: Vec<u64> = r1
        .iter()
        .filter_map(|e| match e {
            Event::SessionStatus {
                status: SessionStatus::Retry { attempt, .. },
                ..
            } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(retries, [1, 2, 3, 4]);
    let fail = events("r1-event_fail.sse").await;
    let errors: Vec<&MessageError> = fail
        .iter()
        .filter_map(|e| match e {
            Event::SessionError { error, .. } => error.as_ref(),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(matches!(
        errors[0],
        MessageError::ApiError {
            is_retryable: true,
            ..
        }
    ));
}

#[tokio::test]
async fn permission_once_turn_assembles_tool_call_text_and_interaction() {
    let ev = events("r2-ev_perm.sse").await;
    let turn = done_turn(&ev, "ses_dd704bf7");
    assert_eq!(turn.messages.len(), 2, "tool step + text step");
    assert_eq!(turn.tool_calls.len(), 1);
    let call = &turn.tool_calls[0];
    assert_eq!(call.tool, "bash");
    assert_eq!(call.status, ToolStatus::Completed);
    assert_eq!(call.input["command"], "echo hi-from-bash");
    assert_eq!(call.output.as_deref(), Some("hi-from-bash\n"));
    assert_eq!(turn.text, "Tool finished: hi-from-bash\n");
    assert_eq!(turn.text_delta_count, 3);
    assert!(turn.error().is_none());
    assert_eq!(turn.interactions.len(), 1);
    assert!(matches!(turn.interactions[0].ask, Ask::Permission(ref p) if p.permission == "bash"));
    assert_eq!(
        turn.interactions[0].outcome,
        Some(AskOutcome::PermissionReplied("once".into()))
    );
    assert_eq!(
        turn.trace.last().map(String::as_str),
        Some("session.status")
    );
    assert!(turn.trace.contains(&"permission.asked".to_string()));
    assert_eq!(
        turn.parts_of("step-finish").len(),
        2,
        "one step-finish per step"
    );
}

#[tokio::test]
async fn permission_reject_turn_records_the_tool_error() {
    let ev = events("r2-ev_perm.sse").await;
    let turn = done_turn(&ev, "ses_dd704478");
    let call = turn.tool_call("bash").expect("bash call");
    assert_eq!(call.status, ToolStatus::Error);
    assert!(
        call.error
            .as_deref()
            .unwrap()
            .contains("rejected permission")
    );
    assert_eq!(
        turn.interactions[0].outcome,
        Some(AskOutcome::PermissionReplied("reject".into()))
    );
    assert_eq!(turn.text_delta_count, 16);
}

#[tokio::test]
async fn abort_with_pending_permission_waits_past_the_first_idle() {
    let ev = events("r2-ev_perm.sse").await;
    let turn = done_turn(&ev, "ses_dd70443c");
    assert!(matches!(
        turn.error(),
        Some(MessageError::MessageAbortedError { .. })
    ));
    assert_eq!(turn.session_errors.len(), 1);
    // The first idle came before the assistant message completed: the collector must have
    // gone on to the completion, which arrives after that idle.
    let first_idle = turn.trace.iter().position(|t| t == "session.idle").unwrap();
    let last_update = turn
        .trace
        .iter()
        .rposition(|t| t == "message.updated")
        .unwrap();
    assert!(last_update > first_idle, "trace: {:?}", turn.trace);
    assert!(turn.messages[0].info.time.completed.is_some());
    assert_eq!(
        turn.interactions[0].outcome, None,
        "permission stayed pending"
    );
}

#[tokio::test]
async fn question_replied_and_rejected_turns() {
    let ev = events("r2-ev_q.sse").await;
    let replied = done_turn(&ev, "ses_dd704691");
    assert_eq!(replied.interactions.len(), 1);
    let i = &replied.interactions[0];
    assert!(matches!(&i.ask, Ask::Question(q) if q.questions[0].options[0].label == "A"));
    assert_eq!(i.answer, Some(AskAnswer::Answers(vec![vec!["A".into()]])));
    assert_eq!(
        i.outcome,
        Some(AskOutcome::QuestionReplied(vec![vec!["A".into()]]))
    );
    assert_eq!(
        replied.tool_call("question").unwrap().status,
        ToolStatus::Completed
    );
    assert_eq!(replied.text_delta_count, 15);

    let rejected = done_turn(&ev, "ses_dd70464e");
    assert_eq!(
        rejected.interactions[0].outcome,
        Some(AskOutcome::QuestionRejected)
    );
    assert_eq!(
        rejected.tool_call("question").unwrap().status,
        ToolStatus::Error
    );
}

#[tokio::test]
async fn structured_turn_from_events_and_from_the_blocking_answer() {
    let ev = events("r2-ev_perm.sse").await;
    let turn = done_turn(&ev, "ses_dd704832");
    assert_eq!(turn.structured_or_err().unwrap()["answer"], "42");
    assert_eq!(
        turn.tool_call("StructuredOutput").unwrap().status,
        ToolStatus::Completed
    );

    let sync = recording("r2-structured_sync.json");
    let body = sync.lines().next().unwrap();
    let answer: MessageWithParts = serde_json::from_str(body).unwrap();
    let blocking = Turn::from_messages(&answer.info.session_id.clone(), vec![answer]);
    assert_eq!(
        blocking.structured,
        Some(serde_json::json!({"answer": "42"}))
    );
    assert_eq!(blocking.tool_calls.len(), 1);
}

#[tokio::test]
async fn structured_output_error_is_a_typed_error() {
    let ev = r#"data: {"type":"server.connected","properties":{}}

data: {"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}

data: {"type":"message.updated","properties":{"sessionID":"ses_1","info":{"id":"msg_2","sessionID":"ses_1","role":"assistant","time":{"created":1,"completed":2},"error":{"name":"StructuredOutputError","data":{"message":"no valid output","retries":2}}}}}

data: {"type":"session.idle","properties":{"sessionID":"ses_1"}}

"#;
    let (events, err) = EventStream::from_recording(
        ev,
        StreamOptions::default(),
        Arc::new(Redactor::for_scenario()),
    )
    .collect_all()
    .await;
    assert!(err.is_none());
    let mut c = TurnCollector::new("ses_1", []);
    let feeds: Vec<Feed> = events.iter().map(|e| c.feed(e)).collect();
    assert_eq!(feeds.last(), Some(&Feed::Done));
    let turn = c.finish();
    match turn.structured_or_err() {
        Err(harness_runtime::client::ClientError::StructuredOutput { message, retries }) => {
            assert_eq!(message, "no valid output");
            assert_eq!(retries, 2);
        }
        other => panic!("expected StructuredOutput, got {other:?}"),
    }
}

#[tokio::test]
async fn failed_model_turns_end_with_the_api_error_after_the_double_idle() {
    let ev = events("r1-event_fail.sse").await;
    for session in ["ses_dd711a16", "ses_dd711a10"] {
        let turn = done_turn(&ev, session);
        assert!(
            matches!(
                turn.error(),
                Some(MessageError::ApiError {
                    is_retryable: true,
                    ..
                })
            ),
            "{session}: {:?}",
            turn.error()
        );
        assert!(turn.messages[0].parts.is_empty());
        // From the assistant message itself, which completes after the first idle.
        assert_eq!(turn.errors.len(), 1, "{session}");
        assert_eq!(turn.errors[0].name(), "APIError");
    }
}

#[tokio::test]
async fn aborted_retry_turn_completes_without_error() {
    let ev = events("r1-event_abort.sse").await;
    let turn = done_turn(&ev, "ses_dd712ea1");
    assert!(turn.error().is_none());
    assert_eq!(turn.messages.len(), 1);
}

#[tokio::test]
async fn unfinished_turn_is_not_done_and_says_what_is_pending() {
    let ev = events("r1-event.sse").await;
    let (c, _) = collect(&ev, "ses_dd712ea1");
    assert!(!c.is_done());
    let pending = c.pending();
    assert!(pending.contains("retry attempt 4"), "{pending}");
    assert!(
        pending.contains("completion of assistant message"),
        "{pending}"
    );
}

#[tokio::test]
async fn baseline_messages_and_stale_idles_do_not_start_a_turn() {
    let ev = events("r2-ev_q.sse").await;
    let sid = "ses_dd704691effe8fArghGi5glm6H";
    let ids: Vec<String> = ev
        .iter()
        .filter_map(|e| match e {
            Event::MessageUpdated { info, .. } if info.session_id == sid => Some(info.id.clone()),
            _ => None,
        })
        .collect();
    // Only the trailing events of a finished turn: its late idle and message updates.
    let tail: Vec<&Event> = ev
        .iter()
        .filter(|e| e.session_id() == Some(sid))
        .skip_while(|e| {
            !matches!(
                e,
                Event::SessionStatus {
                    status: SessionStatus::Idle,
                    ..
                }
            )
        })
        .collect();
    assert!(!tail.is_empty());
    let mut c = TurnCollector::new(sid, ids);
    for e in tail {
        assert_eq!(c.feed(e), Feed::Ignored, "{}", e.type_name());
    }
    assert!(!c.is_done());
}
