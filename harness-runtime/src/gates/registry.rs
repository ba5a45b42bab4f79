//! The scenario's gates: arming at named points, pass-through, release, counters.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::any_point::Target;
use super::counters::CounterTable;
use super::gate::PassCounts;
use super::keyed::{self, Key, Keyed};
use super::{Counter, Counters, Gate, GateError, GatePoint, Point, ProductPoint, WirePoint};
use harness_opencode_api::spelling;

/// The scenario's gates and operation counters. Shared (`Arc`) by the client and provisioning,
/// reached from a scenario with `live.gates()`.
///
/// - **Arming.** [`arm`](Gates::arm) pauses the next pass at a point of any kind (a
///   [`Point`]), [`arm_nth`](Gates::arm_nth) the Nth pass counted from the moment of arming (so `gate = "..."` on the attribute, armed
///   before the scenario starts, counts from the scenario's first operation). Un-armed passes go
///   straight through.
/// - **Release.** A gate stays closed until [`Gate::release`] (or [`Gates::release`] for every
///   gate at a point); once released it lets every operation through. [`gate`](Gates::gate)
///   finds the one armed last at a point (e.g. by `gate = "..."`).
/// - **Teardown.** [`release_all`](Gates::release_all) releases every gate and opens the points
///   for good: the runner calls it when the scenario body ends, so stopping the agents never
///   waits on a gate nobody will release. A scenario that wants to pause the stop itself does
///   so inside its body (arm `stop`, stop the agent, wait until entered, release).
/// - **Counting.** Passes at some points count operations (see [`Counter`]); provisioning
///   counts process exits with [`count`](Gates::count).
///
/// Besides the client's points ([`GatePoint`]), a scenario can gate a product's own traffic on
/// the wire ([`WirePoint`]) and named points in the product's own code ([`ProductPoint`],
/// [`Point::product`]), with the same methods. Their passes are counted per point from the
/// moment it was first armed; an armed one never entered is in [`unreached`](Gates::unreached),
/// which fails the scenario at its end.
#[derive(Debug, Default)]
pub struct Gates {
    passes: Arc<PassCounts>,
    // Wire and product gates; an `Arc` so product point handles outlive a borrow of `Gates`.
    pub(super) keyed: Arc<Keyed>,
    // One bit per point that ever had a gate armed: lets un-armed passes skip the lock.
    armed_points: AtomicU32,
    state: Mutex<State>,
    counters: CounterTable,
}

#[derive(Debug, Default)]
struct State {
    opened_for_good: bool,
    armed: Vec<Armed>,
}

#[derive(Debug)]
struct Armed {
    point: GatePoint,
    // The pass (counted since the scenario started) this gate pauses.
    pass: u64,
    gate: Arc<Gate>,
}

impl Gates {
    /// Gates with the points named in `#[live_agent_test(gate = ...)]` armed for their first pass.
    /// `Live::new` calls this with `ScenarioOptions::gates`. A name is one of:
    ///
    /// - a client point's name ([`GatePoint::name`]): `abort`, `prompt_delivered`, ...;
    /// - a [`WirePoint`]: `request <METHOD> <route>`, `response <METHOD> <route>`,
    ///   `event <type>`;
    /// - `product <name>`: a [`ProductPoint`] in the product's own code.
    ///
    /// The error names the first name that is unknown, malformed, cannot match, or is listed
    /// twice.
    ///
    /// ```
    /// use harness_runtime::gates::{Gates, Point, WirePoint};
    ///
    /// let gates = Gates::from_names(&[
    ///     "abort",
    ///     "request POST /session/{id}/abort",
    ///     "event permission.asked",
    ///     "product before_save",
    /// ])
    /// .unwrap();
    /// let abort = WirePoint::parse("request POST /session/{id}/abort").unwrap();
    /// assert!(gates.gate(abort).is_some());
    /// assert!(gates.gate(Point::product("before_save").unwrap()).is_some());
    /// assert_eq!(gates.unreached().len(), 3); // nothing passed them yet
    ///
    /// let typo = Gates::from_names(&["request POST /session/{id}/abrt"]).unwrap_err();
    /// assert!(typo.to_string().contains("fits no route of OpenCode"));
    /// ```
    pub fn from_names(names: &[&str]) -> Result<Gates, GateError> {
        let gates = Gates::default();
        for (index, &name) in names.iter().enumerate() {
            let point = Point::parse(name)?;
            if names[..index].contains(&name) {
                return Err(GateError::DuplicatePoint {
                    name: name.to_owned(),
                });
            }
            gates.arm(point);
        }
        Ok(gates)
    }

    /// Called by the client and provisioning at `point`: counts the operation the point stands
    /// for (see [`Counter`]), then returns at once unless a gate is armed for this pass, in which
    /// case it enters the gate (publishes "entered") and waits for the release.
    pub async fn pass(&self, point: GatePoint) {
        if let Some(counter) = Counter::counted_by(point) {
            self.counters.increment(counter);
        }
        let pass = self.passes[point.index()].fetch_add(1, Ordering::SeqCst) + 1;
        // `arm` sets the bit before it reads the pass count, so a pass numbered after that read
        // always sees the bit (SeqCst on both sides).
        if self.armed_points.load(Ordering::SeqCst) & point.bit() == 0 {
            return;
        }
        let gate = {
            let state = self.lock();
            if state.opened_for_good {
                None
            } else {
                state
                    .armed
                    .iter()
                    .find(|armed| armed.point == point && armed.pass == pass)
                    .map(|armed| armed.gate.clone())
            }
        };
        if let Some(gate) = gate {
            gate.enter().await;
        }
    }

    /// Arms a gate for the next pass at `point` (of any kind, see [`Point`]): `arm_nth(point,
    /// NonZeroU32::MIN)`.
    ///
    /// ```
    /// use harness_runtime::gates::{Gates, WirePoint};
    ///
    /// let gates = Gates::default();
    /// let reply = gates.arm(WirePoint::parse("request POST /permission/{id}/reply").unwrap());
    /// assert_eq!(reply.name(), "request POST /permission/{id}/reply");
    /// assert!(!reply.is_entered());
    /// ```
    pub fn arm(&self, point: impl Into<Point>) -> Arc<Gate> {
        self.arm_nth(point, NonZeroU32::MIN)
    }

    /// Arms a gate for the `n`th pass at `point` counted from now (1 = the next one), e.g.
    /// `arm_nth(GatePoint::PromptDelivered, NonZeroU32::new(2).unwrap())` pauses the second
    /// prompt, and the 2nd `event permission.asked` is the second such event delivered on a
    /// product's event stream. A client point counts its passes from the scenario's start; a
    /// wire or product point per spelling, from the moment it was first armed. Arming the same
    /// pass twice returns the same gate. After [`release_all`](Gates::release_all) the gate comes
    /// back already released.
    pub fn arm_nth(&self, point: impl Into<Point>, n: NonZeroU32) -> Arc<Gate> {
        match point.into().0 {
            Target::Client(point) => self.arm_client(point, n),
            Target::Named(key) => self.keyed.arm(key, n),
        }
    }

    fn arm_client(&self, point: GatePoint, n: NonZeroU32) -> Arc<Gate> {
        let n = u64::from(n.get());
        let mut state = self.lock();
        self.armed_points.fetch_or(point.bit(), Ordering::SeqCst);
        let base = self.passes[point.index()].load(Ordering::SeqCst);
        let pass = base + n;
        if let Some(armed) = state
            .armed
            .iter()
            .find(|armed| armed.point == point && armed.pass == pass)
        {
            return armed.gate.clone();
        }
        let gate = Arc::new(Gate::armed(point, n, base, self.passes.clone()));
        crate::timeline::note_keyed(crate::timeline::Lane::Gates, "armed", point.name(), || {
            format!("pass {pass} of `{}`", point.name())
        });
        if state.opened_for_good {
            gate.release();
        }
        state.armed.push(Armed {
            point,
            pass,
            gate: gate.clone(),
        });
        gate
    }

    /// The most recently armed gate at `point`, if any (e.g. the one `gate = "..."` armed).
    pub fn gate(&self, point: impl Into<Point>) -> Option<Arc<Gate>> {
        match point.into().0 {
            Target::Client(point) => self
                .lock()
                .armed
                .iter()
                .rev()
                .find(|armed| armed.point == point)
                .map(|armed| armed.gate.clone()),
            Target::Named(key) => self.keyed.latest(&key),
        }
    }

    /// Releases every gate armed at `point`. Later arming at `point` still works.
    pub fn release(&self, point: impl Into<Point>) {
        match point.into().0 {
            Target::Client(point) => {
                for armed in self
                    .lock()
                    .armed
                    .iter()
                    .filter(|armed| armed.point == point)
                {
                    armed.gate.release();
                }
            }
            Target::Named(key) => self.keyed.release(&key),
        }
    }

    /// Releases every gate (client, wire and product) and lets every later pass through, even
    /// at points armed afterwards. Teardown calls it before stopping agents, so nothing waits on
    /// a gate after the scenario body ended. Idempotent.
    pub fn release_all(&self) {
        let mut state = self.lock();
        state.opened_for_good = true;
        for armed in &state.armed {
            armed.gate.release();
        }
        drop(state);
        self.keyed.release_all();
    }

    /// A handle on the product point `name` (`[a-z0-9_.-]+`), for the product's own code to
    /// [`pass`](ProductPoint::pass). Every handle for one name is the same point, whether made
    /// before or after it was armed.
    pub fn product_point(&self, name: &str) -> Result<ProductPoint, GateError> {
        spelling::check_product_name(name).map_err(|p| GateError::from_problem(name, p))?;
        Ok(ProductPoint::new(self.keyed.slot(name), self.keyed.clone()))
    }

    /// The spellings of the wire and product points with an armed gate that was never entered
    /// (`request POST /session/{id}/abort`, `product before_save`), in arming order. The runner
    /// fails a scenario that ends with any, naming them: a gate nothing reached means the
    /// scenario did not test the interleaving it meant to. Client points are not listed.
    pub fn unreached(&self) -> Vec<String> {
        self.keyed.unreached()
    }

    /// Makes the scenario's run an exploring one: `scheduler` orders its wire steps and product
    /// point passes. Set by the runner before the body starts.
    pub(crate) fn explore_with(&self, scheduler: Arc<crate::explore::Scheduler>) {
        self.keyed.explore_with(scheduler);
    }

    /// The exploring run's scheduler, if the run explores.
    pub(crate) fn scheduler(&self) -> Option<&Arc<crate::explore::Scheduler>> {
        self.keyed.scheduler()
    }

    /// Called by the forwarder before it forwards a product's request: enters every armed
    /// `request` gate whose pattern matches and whose pass this is. One atomic load when no
    /// `request` gate is armed.
    pub(crate) async fn pass_request(&self, method: &str, path: &str) {
        if self.keyed.kind_armed(keyed::REQUEST) {
            self.keyed
                .pass_where(|key| {
                    matches!(key, Key::Wire(WirePoint::Request(route)) if route.matches(method, path))
                })
                .await;
        }
    }

    /// Called by the forwarder after a response arrived, before the product gets it: like
    /// [`pass_request`](Gates::pass_request), for `response` gates.
    pub(crate) async fn pass_response(&self, method: &str, path: &str) {
        if self.keyed.kind_armed(keyed::RESPONSE) {
            self.keyed
                .pass_where(|key| {
                    matches!(key, Key::Wire(WirePoint::Response(route)) if route.matches(method, path))
                })
                .await;
        }
    }

    /// Called by the forwarder before it delivers an event of `event_type` on a product's event
    /// stream: like [`pass_request`](Gates::pass_request), for `event` gates.
    pub(crate) async fn pass_event(&self, event_type: &str) {
        if self.keyed.kind_armed(keyed::EVENT) {
            self.keyed
                .pass_where(|key| {
                    matches!(key, Key::Wire(WirePoint::Event(kind)) if kind.as_str() == event_type)
                })
                .await;
        }
    }

    /// Called on an ACP agent's traffic at `point` (see [`AcpPoint`](super::AcpPoint)): like
    /// [`pass_request`](Gates::pass_request), for `acp` gates.
    pub(crate) async fn pass_acp(&self, point: harness_opencode_api::spelling::AcpSpelled) {
        if self.keyed.kind_armed(keyed::ACP) {
            self.keyed
                .pass_where(|key| matches!(key, Key::Acp(armed) if armed.0 == point))
                .await;
        }
    }

    /// How many times `point` was passed since the scenario started.
    pub fn passes(&self, point: GatePoint) -> u64 {
        self.passes[point.index()].load(Ordering::SeqCst)
    }

    /// Counts one `counter` operation. Provisioning calls `count(Counter::ProcessExit)` when it
    /// observes an agent process exit; the other counters are counted by [`pass`](Gates::pass).
    pub fn count(&self, counter: Counter) {
        self.counters.increment(counter);
    }

    /// How many `counter` operations were counted.
    #[must_use]
    pub fn counted(&self, counter: Counter) -> u64 {
        self.counters.get(counter)
    }

    /// A snapshot of every counter, for evidence.
    #[must_use]
    pub fn counters(&self) -> Counters {
        self.counters.snapshot()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock; recover rather than cascade a poisoned state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The attribute (`harness-macros`) checks gate names at compile time from the crate both depend
/// on; this keeps its copy of the rules the runtime's.
#[cfg(test)]
mod attribute_agrees {
    use super::Gates;
    use crate::gates::{GatePoint, WirePoint};

    /// The attribute's check (`spelling::check`, its compile error) accepts a name exactly when
    /// the runtime does, with the runtime's message: good and bad names alike.
    #[test]
    fn the_attribute_checks_gate_names_as_the_runtime_does() {
        let mut names: Vec<String> = GatePoint::ALL.map(|p| p.name().to_owned()).to_vec();
        for (method, path) in harness_opencode_api::tables::ROUTES {
            names.push(format!("request {method} {path}"));
            names.push(format!("response {method} {path}"));
        }
        for kind in harness_opencode_api::tables::EVENT_TYPES {
            names.push(format!("event {kind}"));
        }
        names.extend(
            [
                "request POST /session/{id}/abort",
                "response GET /session/{id}/message/{id}",
                "request POST /permission/{sessionID}/reply",
                "request GET /session/status",
                "request GET /api/fs/read/*",
                "product before_save",
                "product a.b-c_9",
                // Bad ones, one per problem.
                "before_abort",
                "Abort",
                "",
                "request",
                "request ",
                "request POST",
                "request POST  /session",
                "request post /session",
                "request P0ST /session",
                "request POST session",
                "request POST /session?directory=/x",
                "request POST /session//abort",
                "request POST /session/",
                "request POST /session/{id",
                "request POST /session/{}/abort",
                "request POST /session/x{id}/abort",
                "request POST /session/{sessionId}/abort",
                "request POST /session/{id}/abrt",
                "request HEAD /session",
                "request GET /session/{id}/abort",
                "request GET /api/fs/*/read",
                "response DELETE /session/status",
                "event",
                "event permission.askd",
                "event permission asked",
                "product",
                "product Before",
                "product before save",
                "products x",
            ]
            .map(str::to_owned),
        );
        for name in &names {
            let runtime = Gates::from_names(&[name.as_str()])
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(
                harness_opencode_api::spelling::check(name),
                runtime,
                "`{name}`"
            );
            if let Ok(point) = WirePoint::parse(name) {
                assert_eq!(&point.to_string(), name, "the spelling round-trips");
            }
        }
    }
}
