//! Signal and Gate: publish/wait in every order, many waiters, cancellation, ordering, ceilings.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use harness_runtime::gates::{Gate, GateError};
use harness_runtime::testing::Signal;

/// Ceiling on every wait in these tests, so a bug fails instead of hanging.
const CEILING: Duration = Duration::from_secs(10);

async fn within<F: std::future::Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(CEILING, future)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish within {CEILING:?}"))
}

#[tokio::test]
async fn signal_published_before_waiting_returns_at_once() {
    let signal = Signal::new("ready");
    assert!(!signal.is_published());
    signal.publish();
    assert!(signal.is_published());
    // Must be ready on the first poll: no task switch, no timer.
    assert_eq!(signal.wait().now_or_never(), Some(()));
    signal.publish(); // idempotent
    assert_eq!(signal.wait().now_or_never(), Some(()));
}

#[tokio::test]
async fn signal_unpublished_does_not_return() {
    let signal = Signal::new("ready");
    assert_eq!(signal.wait().now_or_never(), None);
    assert_eq!(
        tokio::time::timeout(Duration::from_millis(20), signal.wait())
            .await
            .ok(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_published_after_waiting_wakes_many_waiters() {
    let signal = Arc::new(Signal::new("ready"));
    let waiting = Arc::new(tokio::sync::Semaphore::new(0));
    let waiters: Vec<_> = (0..32)
        .map(|_| {
            let signal = signal.clone();
            let waiting = waiting.clone();
            tokio::spawn(async move {
                let wait = signal.wait();
                tokio::pin!(wait);
                // Register as a waiter before announcing it, so the publish below really
                // happens after every waiter is parked.
                assert!((&mut wait).now_or_never().is_none());
                waiting.add_permits(1);
                wait.await;
            })
        })
        .collect();
    within("every waiter parking", waiting.acquire_many(32))
        .await
        .unwrap()
        .forget();
    for waiter in &waiters {
        assert!(!waiter.is_finished());
    }
    signal.publish();
    for waiter in waiters {
        within("a waiter waking", waiter).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_waiting_future_leaves_other_waiters_working() {
    let signal = Arc::new(Signal::new("ready"));
    // A waiter polled once (parked) then dropped.
    let mut dropped = Box::pin(signal.wait());
    assert!((&mut dropped).now_or_never().is_none());
    // A waiter cancelled by a timeout while parked.
    assert!(
        tokio::time::timeout(Duration::from_millis(10), signal.wait())
            .await
            .is_err()
    );
    let survivor = tokio::spawn({
        let signal = signal.clone();
        async move { signal.wait().await }
    });
    drop(dropped);
    signal.publish();
    within("the surviving waiter", survivor).await.unwrap();
    // A waiter that starts after the cancellations and the publish returns at once.
    assert_eq!(signal.wait().now_or_never(), Some(()));
}

#[tokio::test]
async fn signal_ceiling_names_the_signal() {
    let signal = Signal::new("server ready");
    let error = signal
        .wait_within(Duration::from_millis(20))
        .await
        .unwrap_err();
    let GateError::NotPublished { signal: name, .. } = &error else {
        panic!("unexpected error {error:?}");
    };
    assert_eq!(name, "server ready");
    let message = error.to_string();
    assert!(
        message.starts_with("signal `server ready` was never published within "),
        "{message}"
    );
    signal.publish();
    signal.wait_within(Duration::from_millis(20)).await.unwrap();
}

/// One run of: operation enters, scenario acts meanwhile, releases, operation continues.
async fn ordered_run() -> Vec<&'static str> {
    let gate = Arc::new(Gate::new("op"));
    let log = Arc::new(Mutex::new(Vec::new()));
    let operation = tokio::spawn({
        let gate = gate.clone();
        let log = log.clone();
        async move {
            log.lock().unwrap().push("operation: before gate");
            gate.enter().await;
            log.lock().unwrap().push("operation: after gate");
        }
    });
    within("the operation entering", gate.wait_until_entered()).await;
    assert!(gate.is_entered());
    // Give the operation every chance to run past the gate if the gate were broken.
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    log.lock().unwrap().push("scenario: meanwhile");
    assert!(!operation.is_finished());
    gate.release();
    within("the operation finishing", operation).await.unwrap();
    Arc::try_unwrap(log).unwrap().into_inner().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_orders_operation_and_scenario_every_time() {
    for run in 0..50 {
        assert_eq!(
            ordered_run().await,
            [
                "operation: before gate",
                "scenario: meanwhile",
                "operation: after gate"
            ],
            "run {run}"
        );
    }
}

#[tokio::test]
async fn gate_release_is_sticky_and_enter_after_release_returns_at_once() {
    let gate = Gate::new("op");
    assert!(!gate.is_entered() && !gate.is_released());
    gate.release();
    assert!(gate.is_released());
    assert_eq!(gate.enter().now_or_never(), Some(()));
    assert!(gate.is_entered());
    assert_eq!(gate.enter().now_or_never(), Some(()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_holds_every_concurrent_enterer_until_release() {
    let gate = Arc::new(Gate::new("op"));
    let enterers: Vec<_> = (0..8)
        .map(|_| {
            let gate = gate.clone();
            tokio::spawn(async move { gate.enter().await })
        })
        .collect();
    within("an enterer", gate.wait_until_entered()).await;
    assert!(enterers.iter().all(|task| !task.is_finished()));
    gate.release();
    for task in enterers {
        within("an enterer leaving", task).await.unwrap();
    }
}

#[tokio::test]
async fn dropped_enter_leaves_gate_entered_and_usable() {
    let gate = Gate::new("op");
    let mut enter = Box::pin(gate.enter());
    assert!((&mut enter).now_or_never().is_none());
    drop(enter);
    // The operation reached the gate even though it was cancelled while inside.
    assert!(gate.is_entered());
    assert_eq!(gate.wait_until_entered().now_or_never(), Some(()));
    gate.release();
    assert_eq!(gate.enter().now_or_never(), Some(()));
}

#[tokio::test]
async fn standalone_gate_ceiling_names_the_gate() {
    let gate = Gate::new("my step");
    let error = gate
        .wait_until_entered_within(Duration::from_millis(20))
        .await
        .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("gate `my step` was never entered within "),
        "{message}"
    );
    assert!(message.contains("(nothing called enter)"), "{message}");
}
