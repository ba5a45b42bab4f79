//! Gates at named points: arming, Nth-pass arming, pass-through, release_all, counters, names.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use harness_runtime::gates::{Counter, GateError, GatePoint, Gates};

const CEILING: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(CEILING, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {CEILING:?}"))
}

#[test]
fn every_point_round_trips_through_its_attribute_name() {
    let names: Vec<_> = GatePoint::ALL.iter().map(|point| point.name()).collect();
    assert_eq!(
        names,
        [
            "before_prompt",
            "prompt_delivered",
            "turn_collected",
            "abort",
            "get_session",
            "permission_reply",
            "question_reply",
            "stop"
        ]
    );
    for point in GatePoint::ALL {
        assert_eq!(GatePoint::from_name(point.name()), Some(point));
        assert_eq!(point.to_string(), point.name());
    }
    assert_eq!(GatePoint::from_name("Abort"), None);
    assert_eq!(GatePoint::from_name(" abort"), None);
    assert_eq!(GatePoint::from_name("BeforeAbort"), None);
}

#[test]
fn from_names_arms_the_named_points_and_rejects_bad_lists() {
    let gates = Gates::from_names(&["abort", "stop"]).unwrap();
    let abort = gates.gate(GatePoint::BeforeAbort).expect("abort armed");
    assert_eq!(abort.point(), Some(GatePoint::BeforeAbort));
    assert_eq!(abort.name(), "abort");
    assert!(gates.gate(GatePoint::BeforeStop).is_some());
    assert!(gates.gate(GatePoint::BeforePrompt).is_none());

    let unknown = Gates::from_names(&["abort", "prompt"]).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "unknown gate point `prompt`: expected one of before_prompt, prompt_delivered, \
         turn_collected, abort, get_session, permission_reply, question_reply, stop, or a wire, \
         product or ACP point: `request <METHOD> <route>`, `response <METHOD> <route>`, \
         `event <type>`, `product <name>`, `acp before|after <method>`, `acp update <kind>`"
    );
    let duplicate = Gates::from_names(&["stop", "stop"]).unwrap_err();
    assert!(matches!(duplicate, GateError::DuplicatePoint { ref name } if name == "stop"));
    assert!(
        duplicate
            .to_string()
            .starts_with("gate point `stop` is listed twice"),
        "{duplicate}"
    );
    assert!(Gates::from_names(&[]).is_ok());
}

#[tokio::test]
async fn unarmed_points_pass_through_quickly() {
    let gates = Gates::default();
    // Another point armed: the fast path must still skip the lock for this one.
    let _elsewhere = gates.arm(GatePoint::BeforeStop);
    let started = Instant::now();
    for _ in 0..100_000 {
        // Ready on the first poll: no await point is reached when nothing is armed.
        assert_eq!(gates.pass(GatePoint::BeforePrompt).now_or_never(), Some(()));
    }
    let elapsed = started.elapsed();
    assert_eq!(gates.passes(GatePoint::BeforePrompt), 100_000);
    // Generous for a debug build on a loaded machine; a lock-plus-scan per pass or any timer
    // or yield would show up far above this.
    assert!(
        elapsed < Duration::from_secs(1),
        "1e5 un-armed passes took {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn armed_point_pauses_its_next_pass_until_released() {
    for run in 0..50 {
        let gates = Arc::new(Gates::default());
        let log = Arc::new(Mutex::new(Vec::new()));
        let gate = gates.arm(GatePoint::BeforeAbort);
        let client = tokio::spawn({
            let gates = gates.clone();
            let log = log.clone();
            async move {
                gates.pass(GatePoint::BeforeAbort).await;
                log.lock().unwrap().push("abort posted");
            }
        });
        within(
            "the abort entering",
            gate.wait_until_entered_within(CEILING),
        )
        .await
        .unwrap();
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        log.lock().unwrap().push("turn reached the racing state");
        assert!(!client.is_finished(), "run {run}");
        gate.release();
        within("the abort", client).await.unwrap();
        assert_eq!(
            *log.lock().unwrap(),
            ["turn reached the racing state", "abort posted"],
            "run {run}"
        );
        // Release is sticky: later passes go through.
        assert_eq!(gates.pass(GatePoint::BeforeAbort).now_or_never(), Some(()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arm_nth_pauses_only_that_pass() {
    for run in 0..50 {
        let gates = Arc::new(Gates::default());
        let second = gates.arm_nth(
            GatePoint::PromptDelivered,
            std::num::NonZeroU32::new(2).unwrap(),
        );
        // The first prompt is not paused.
        assert_eq!(
            gates.pass(GatePoint::PromptDelivered).now_or_never(),
            Some(()),
            "run {run}"
        );
        assert!(!second.is_entered());
        let client = tokio::spawn({
            let gates = gates.clone();
            async move { gates.pass(GatePoint::PromptDelivered).await }
        });
        within("the second prompt", second.wait_until_entered()).await;
        // Counting happens before the gate: the scenario sees the prompt it paused.
        assert_eq!(gates.counted(Counter::Prompt), 2);
        assert!(!client.is_finished(), "run {run}");
        second.release();
        within("the second prompt leaving", client).await.unwrap();
        // The third pass has no gate.
        assert_eq!(
            gates.pass(GatePoint::PromptDelivered).now_or_never(),
            Some(())
        );
    }
}

#[tokio::test]
async fn arming_counts_from_now_and_is_idempotent_per_pass() {
    let gates = Gates::default();
    for _ in 0..3 {
        gates.pass(GatePoint::BeforePrompt).await;
    }
    let next = gates.arm(GatePoint::BeforePrompt);
    assert!(Arc::ptr_eq(
        &next,
        &gates.arm_nth(
            GatePoint::BeforePrompt,
            std::num::NonZeroU32::new(1).unwrap()
        )
    ));
    let later = gates.arm_nth(
        GatePoint::BeforePrompt,
        std::num::NonZeroU32::new(2).unwrap(),
    );
    assert!(!Arc::ptr_eq(&next, &later));
    // `gate` answers the most recently armed one.
    assert!(Arc::ptr_eq(
        &later,
        &gates.gate(GatePoint::BeforePrompt).unwrap()
    ));
    // The fourth pass (first after arming) pauses.
    let mut fourth = Box::pin(gates.pass(GatePoint::BeforePrompt));
    assert!((&mut fourth).now_or_never().is_none());
    assert!(next.is_entered() && !later.is_entered());
    gates.release(GatePoint::BeforePrompt);
    assert_eq!(fourth.now_or_never(), Some(()));
    // `release(point)` released the later gate too.
    assert!(later.is_released());
    assert_eq!(gates.pass(GatePoint::BeforePrompt).now_or_never(), Some(()));
}

#[tokio::test]
async fn ceiling_error_names_the_point_and_how_far_it_got() {
    let gates = Gates::default();
    let gate = gates.arm_nth(
        GatePoint::BeforeAbort,
        std::num::NonZeroU32::new(2).unwrap(),
    );
    gates.pass(GatePoint::BeforeAbort).await;
    let error = gate
        .wait_until_entered_within(Duration::from_millis(50))
        .await
        .unwrap_err();
    let GateError::NeverEntered {
        gate: name,
        detail,
        ceiling,
    } = &error
    else {
        panic!("unexpected error {error:?}");
    };
    assert_eq!(name, "abort");
    assert_eq!(
        detail,
        "armed for pass 2 after arming; the point was passed 1 time(s) since"
    );
    assert!(*ceiling > Duration::ZERO);
    let message = error.to_string();
    assert!(
        message.starts_with("gate `abort` was never entered within "),
        "{message}"
    );
    if std::env::var_os("LIVE_TIMEOUT_SCALE").is_none() {
        assert_eq!(*ceiling, Duration::from_millis(50));
        assert_eq!(
            message,
            "gate `abort` was never entered within 50ms (armed for pass 2 after arming; the \
             point was passed 1 time(s) since): the operation it pauses did not reach it; check \
             that the scenario triggers that operation after arming the gate"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn release_all_unblocks_and_opens_every_point_for_good() {
    let gates = Arc::new(Gates::from_names(&["stop", "before_prompt"]).unwrap());
    let stop_gate = gates.gate(GatePoint::BeforeStop).unwrap();
    let stop = tokio::spawn({
        let gates = gates.clone();
        async move { gates.pass(GatePoint::BeforeStop).await }
    });
    within("stop entering", stop_gate.wait_until_entered()).await;
    assert!(!stop.is_finished());
    gates.release_all();
    within("stop after release_all", stop).await.unwrap();
    // A gate armed but never reached is released too.
    assert!(gates.gate(GatePoint::BeforePrompt).unwrap().is_released());
    assert_eq!(gates.pass(GatePoint::BeforePrompt).now_or_never(), Some(()));
    // Arming after teardown began yields an open gate: nothing can hang the teardown.
    let late = gates.arm(GatePoint::BeforeStop);
    assert!(late.is_released());
    assert_eq!(gates.pass(GatePoint::BeforeStop).now_or_never(), Some(()));
    gates.release_all();
}

#[tokio::test]
async fn passes_count_their_operations_and_counters_serialize() {
    let gates = Gates::default();
    for point in GatePoint::ALL {
        gates.pass(point).await;
    }
    gates.pass(GatePoint::PromptDelivered).await;
    gates.pass(GatePoint::AfterPermissionReply).await;
    gates.count(Counter::ProcessExit);
    let counters = gates.counters();
    assert_eq!(
        (
            counters.prompts,
            counters.permission_replies,
            counters.question_replies,
            counters.aborts,
            counters.process_exits,
        ),
        (2, 2, 1, 1, 1)
    );
    assert_eq!(gates.counted(Counter::Abort), 1);
    assert_eq!(gates.passes(GatePoint::BeforePrompt), 1);
    assert_eq!(
        serde_json::to_value(gates.counters()).unwrap(),
        serde_json::json!({
            "prompts": 2,
            "permission_replies": 2,
            "question_replies": 1,
            "aborts": 1,
            "process_exits": 1,
        })
    );
}
