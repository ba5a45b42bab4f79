//! Wire and product gates: points named by a spelling rather than a fixed enum, so their passes
//! are counted per armed point, from the moment it was first armed.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::{AcpPoint, Gate, WirePoint};
use crate::timeline::Lane;

/// The wire kinds with an armed gate, as bits: a pass of a kind with no bit set returns after
/// one atomic load.
pub(crate) const REQUEST: u8 = 1;
pub(crate) const RESPONSE: u8 = 2;
pub(crate) const EVENT: u8 = 4;
pub(crate) const ACP: u8 = 8;

/// The registry of wire and product gates, shared (`Arc`) by [`Gates`](super::Gates) and every
/// product point handle it made.
#[derive(Debug, Default)]
pub(crate) struct Keyed {
    armed_kinds: AtomicU8,
    state: Mutex<State>,
    /// An exploring run's scheduler: every wire step and product point pass goes through it
    /// before its gates.
    scheduler: std::sync::OnceLock<Arc<crate::explore::Scheduler>>,
}

#[derive(Debug, Default)]
struct State {
    opened_for_good: bool,
    points: Vec<Point>,
    slots: Vec<Arc<ProductSlot>>,
}

/// A point that was armed at least once.
#[derive(Debug)]
struct Point {
    key: Key,
    spelling: String,
    // Passes since the point was first armed; read without the lock by its gates' diagnostics.
    passes: Arc<AtomicU64>,
    // (the pass it pauses, the gate)
    gates: Vec<(u64, Arc<Gate>)>,
}

/// What a point is, for matching a pass against it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Key {
    Wire(WirePoint),
    Product(String),
    Acp(AcpPoint),
}

/// The spelling: `request POST /session/{id}/abort`, `product before_save`.
impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Key::Wire(point) => point.fmt(f),
            Key::Product(name) => write!(f, "product {name}"),
            Key::Acp(point) => point.fmt(f),
        }
    }
}

/// A product point's armed flag, one per name, shared by every handle of that name.
#[derive(Debug)]
pub(crate) struct ProductSlot {
    name: String,
    armed: AtomicBool,
}

impl ProductSlot {
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Whether a gate was ever armed at this point: one atomic load.
    pub(crate) fn is_armed(&self) -> bool {
        self.armed.load(Ordering::SeqCst)
    }
}

impl Keyed {
    /// The slot for product point `name` (checked by the caller), made on first use.
    pub(crate) fn slot(&self, name: &str) -> Arc<ProductSlot> {
        Self::slot_in(&mut self.lock(), name)
    }

    fn slot_in(state: &mut State, name: &str) -> Arc<ProductSlot> {
        if let Some(slot) = state.slots.iter().find(|slot| slot.name == name) {
            return slot.clone();
        }
        let slot = Arc::new(ProductSlot {
            name: name.to_owned(),
            armed: AtomicBool::new(false),
        });
        state.slots.push(slot.clone());
        slot
    }

    /// Arms the `n`th pass (from now) at `key`; the same pass twice returns the same gate.
    pub(crate) fn arm(&self, key: Key, n: NonZeroU32) -> Arc<Gate> {
        let n = u64::from(n.get());
        let mut state = self.lock();
        // Flag first, then read the count, both under the lock the passes count under: a pass
        // that missed the flag happened before arming and is not counted.
        match &key {
            Key::Wire(point) => {
                self.armed_kinds.fetch_or(kind_bit(point), Ordering::SeqCst);
            }
            Key::Product(name) => {
                Self::slot_in(&mut state, name)
                    .armed
                    .store(true, Ordering::SeqCst);
            }
            Key::Acp(_) => {
                self.armed_kinds.fetch_or(ACP, Ordering::SeqCst);
            }
        }
        let opened_for_good = state.opened_for_good;
        let index = match state.points.iter().position(|point| point.key == key) {
            Some(index) => index,
            None => {
                let spelling = key.to_string();
                state.points.push(Point {
                    key,
                    spelling,
                    passes: Arc::default(),
                    gates: Vec::new(),
                });
                state.points.len() - 1
            }
        };
        let point = &mut state.points[index];
        let base = point.passes.load(Ordering::SeqCst);
        let pass = base + n;
        if let Some((_, gate)) = point.gates.iter().find(|(p, _)| *p == pass) {
            return gate.clone();
        }
        // Wire gates go beside the product's requests in the report; product gates with gates.
        let lane = match point.key {
            Key::Wire(_) | Key::Acp(_) => Lane::Wire,
            Key::Product(_) => Lane::Gates,
        };
        let gate = Arc::new(Gate::armed_keyed(
            point.spelling.clone(),
            lane,
            n,
            base,
            point.passes.clone(),
        ));
        crate::timeline::note_keyed(lane, "armed", &point.spelling, || {
            format!("pass {n} of `{}` after arming", point.spelling)
        });
        if opened_for_good {
            // Teardown began: nothing will pass, so the gate is neither kept nor unreached.
            gate.release();
        } else {
            point.gates.push((pass, gate.clone()));
        }
        gate
    }

    /// The most recently armed gate at `key`.
    pub(crate) fn latest(&self, key: &Key) -> Option<Arc<Gate>> {
        let state = self.lock();
        let point = state.points.iter().find(|point| point.key == *key)?;
        point.gates.last().map(|(_, gate)| gate.clone())
    }

    /// Releases every gate armed at `key`.
    pub(crate) fn release(&self, key: &Key) {
        let state = self.lock();
        for point in state.points.iter().filter(|point| point.key == *key) {
            for (_, gate) in &point.gates {
                gate.release();
            }
        }
    }

    /// Whether a gate of a wire kind (`REQUEST`, `RESPONSE`, `EVENT`) was ever armed.
    pub(crate) fn kind_armed(&self, bit: u8) -> bool {
        self.armed_kinds.load(Ordering::SeqCst) & bit != 0
    }

    /// Counts a pass at every armed point `matches` accepts and enters, in arming order, each
    /// gate armed for the pass this is.
    pub(crate) async fn pass_where(&self, matches: impl Fn(&Key) -> bool) {
        let gates: Vec<Arc<Gate>> = {
            let state = self.lock();
            if state.opened_for_good {
                return;
            }
            let mut gates = Vec::new();
            for point in state.points.iter().filter(|point| matches(&point.key)) {
                let pass = point.passes.fetch_add(1, Ordering::SeqCst) + 1;
                gates.extend(
                    point
                        .gates
                        .iter()
                        .filter(|(p, _)| *p == pass)
                        .map(|(_, gate)| gate.clone()),
                );
            }
            gates
        };
        for gate in gates {
            gate.enter().await;
        }
    }

    /// Makes the run an exploring one: `scheduler` orders its decision points. Once per run.
    pub(crate) fn explore_with(&self, scheduler: Arc<crate::explore::Scheduler>) {
        let _ = self.scheduler.set(scheduler);
    }

    /// The exploring run's scheduler, if this run explores.
    pub(crate) fn scheduler(&self) -> Option<&Arc<crate::explore::Scheduler>> {
        self.scheduler.get()
    }

    /// Releases every gate and lets every later pass through; an exploring run's scheduler
    /// stops holding too.
    pub(crate) fn release_all(&self) {
        if let Some(scheduler) = self.scheduler.get() {
            scheduler.stop();
        }
        let mut state = self.lock();
        state.opened_for_good = true;
        for point in &state.points {
            for (_, gate) in &point.gates {
                gate.release();
            }
        }
    }

    /// The spellings of points with a gate never entered, in arming order, each once.
    pub(crate) fn unreached(&self) -> Vec<String> {
        self.lock()
            .points
            .iter()
            .filter(|point| point.gates.iter().any(|(_, gate)| !gate.is_entered()))
            .map(|point| point.spelling.clone())
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock; recover rather than cascade a poisoned state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The armed-kinds bit of a wire point.
fn kind_bit(point: &WirePoint) -> u8 {
    match point {
        WirePoint::Request(_) => REQUEST,
        WirePoint::Response(_) => RESPONSE,
        WirePoint::Event(_) => EVENT,
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroU32;
    use std::sync::Arc;
    use std::time::Duration;

    use futures::FutureExt;

    use crate::gates::{Gates, WirePoint};
    use crate::timeline::{Collector, Lane, install_on_this_thread};

    fn point(spelling: &str) -> WirePoint {
        WirePoint::parse(spelling).unwrap()
    }

    #[tokio::test]
    async fn a_request_gate_pauses_only_matching_requests_counted_from_arming() {
        let gates = Gates::default();
        let abort = point("request POST /session/{id}/abort");
        // Before arming: not counted.
        gates.pass_request("POST", "/session/ses_1/abort").await;
        let second = gates.arm_nth(&abort, NonZeroU32::new(2).unwrap());
        for (method, path) in [
            ("GET", "/session/ses_1/abort"),
            ("POST", "/session/ses_1/prompt_async"),
            ("POST", "/session/status/abort/x"),
        ] {
            assert_eq!(gates.pass_request(method, path).now_or_never(), Some(()));
        }
        // Responses and events are other points.
        assert_eq!(
            gates
                .pass_response("POST", "/session/ses_1/abort")
                .now_or_never(),
            Some(())
        );
        assert_eq!(
            gates
                .pass_request("POST", "/session/ses_1/abort?directory=/ws")
                .now_or_never(),
            Some(())
        );
        assert!(!second.is_entered());
        let mut held = Box::pin(gates.pass_request("POST", "/session/ses_2/abort"));
        assert!((&mut held).now_or_never().is_none());
        assert!(second.is_entered());
        second.release();
        assert_eq!(held.now_or_never(), Some(()));
        assert_eq!(
            gates
                .pass_request("POST", "/session/ses_3/abort")
                .now_or_never(),
            Some(())
        );
        assert!(gates.unreached().is_empty());
    }

    #[tokio::test]
    async fn every_matching_point_is_entered_in_arming_order() {
        let gates = Arc::new(Gates::default());
        let by_id = gates.arm(point("response GET /session/{id}/message"));
        let by_name = gates.arm(point("response GET /session/{sessionID}/message"));
        let passing = tokio::spawn({
            let gates = gates.clone();
            async move { gates.pass_response("GET", "/session/ses_1/message").await }
        });
        by_id
            .wait_until_entered_within(Duration::from_secs(10))
            .await
            .unwrap();
        assert!(!by_name.is_entered(), "entered one after the other");
        by_id.release();
        by_name
            .wait_until_entered_within(Duration::from_secs(10))
            .await
            .unwrap();
        by_name.release();
        tokio::time::timeout(Duration::from_secs(10), passing)
            .await
            .unwrap()
            .unwrap();
    }

    #[tokio::test]
    async fn an_event_gate_pauses_the_nth_event_of_its_type() {
        let gates = Gates::default();
        let asked = gates.arm_nth(point("event permission.asked"), NonZeroU32::new(2).unwrap());
        // Before its pass, events of the type go through; others are not counted.
        assert_eq!(
            gates.pass_event("permission.asked").now_or_never(),
            Some(())
        );
        assert_eq!(gates.pass_event("session.idle").now_or_never(), Some(()));
        assert!(!asked.is_entered());
        let mut held = Box::pin(gates.pass_event("permission.asked"));
        assert!((&mut held).now_or_never().is_none());
        asked.release();
        assert_eq!(held.now_or_never(), Some(()));
    }

    #[test]
    fn unarmed_kinds_skip_the_lock() {
        let gates = Arc::new(Gates::default());
        let _request = gates.arm(point("request POST /session"));
        // With the registry locked here, a pass of another kind that took the lock would block.
        let state = gates.keyed.lock();
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn({
            let gates = gates.clone();
            move || {
                let event = gates.pass_event("session.idle").now_or_never();
                let response = gates.pass_response("POST", "/session").now_or_never();
                done.send((event, response)).unwrap();
            }
        });
        let passed = finished.recv_timeout(Duration::from_secs(10));
        drop(state);
        assert_eq!(passed, Ok((Some(()), Some(()))), "the passes took the lock");
    }

    /// The run report's wire lane: wire gates armed, entered and released under their spelling.
    #[tokio::test]
    async fn wire_gates_note_the_timeline_under_their_spelling() {
        let collector = Collector::new();
        install_on_this_thread(Some(collector.clone()));
        let gates = Gates::default();
        let gate = gates.arm(point("event session.idle"));
        gate.release();
        gates.pass_event("session.idle").await;
        install_on_this_thread(None);
        let entries = collector.take().entries;
        let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["armed", "entered", "released"]);
        assert!(
            entries
                .iter()
                .all(|e| e.key.as_deref() == Some("event session.idle") && e.lane == Lane::Wire),
            "{entries:?}"
        );
        assert_eq!(
            entries[0].text,
            "pass 1 of `event session.idle` after arming"
        );
    }

    /// Product gates are drawn with the other gates.
    #[tokio::test]
    async fn product_gates_note_the_gates_lane() {
        let collector = Collector::new();
        install_on_this_thread(Some(collector.clone()));
        let gates = Gates::default();
        let point = gates.product_point("before_save").unwrap();
        gates
            .arm(crate::gates::Point::product("before_save").unwrap())
            .release();
        point.pass().await;
        install_on_this_thread(None);
        let entries = collector.take().entries;
        assert_eq!(entries.len(), 3, "{entries:?}");
        assert!(
            entries
                .iter()
                .all(|e| e.key.as_deref() == Some("product before_save") && e.lane == Lane::Gates),
            "{entries:?}"
        );
    }
}
