//! A one-shot signal: published once, awaited from any task.

use tokio::sync::watch;

/// A fact that becomes true once and stays true ("the prompt was delivered").
///
/// [`wait`](Signal::wait) returns at once when the signal is already published, and otherwise
/// sleeps (no polling) until [`publish`](Signal::publish). Any number of tasks may wait; dropping
/// a waiting future (cancellation, `select!`, a timeout) affects no other waiter.
#[derive(Debug)]
pub struct Signal {
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    name: String,
    // A watch channel keeps the latest value for late subscribers, which is exactly "published
    // once, seen by everyone who asks later".
    sender: watch::Sender<bool>,
}

impl Signal {
    /// An unpublished signal called `name` (used in ceiling errors).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            sender: watch::Sender::new(false),
        }
    }

    /// The signal's name.
    #[cfg(any(test, feature = "testing"))]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Publishes the signal, waking every waiter. Publishing again does nothing.
    pub fn publish(&self) {
        self.sender
            .send_if_modified(|published| !std::mem::replace(published, true));
    }

    /// Whether the signal was published.
    pub fn is_published(&self) -> bool {
        *self.sender.borrow()
    }

    /// Waits until the signal is published; returns at once if it already is. Cancel-safe.
    pub async fn wait(&self) {
        let mut receiver = self.sender.subscribe();
        // `wait_for` checks the current value first, so a publish before the subscription is
        // not missed. It fails only when the sender is dropped, and `self` owns the sender.
        let published = receiver.wait_for(|published| *published).await.is_ok();
        debug_assert!(published, "the signal owns its sender");
    }

    /// [`wait`](Signal::wait) with a ceiling, scaled by `LIVE_TIMEOUT_SCALE`.
    #[cfg(any(test, feature = "testing"))]
    pub async fn wait_within(&self, ceiling: std::time::Duration) -> Result<(), super::GateError> {
        let ceiling = crate::settings::scaled(ceiling);
        tokio::time::timeout(ceiling, self.wait())
            .await
            .map_err(|_| super::GateError::NotPublished {
                signal: self.name.clone(),
                ceiling,
            })
    }
}
