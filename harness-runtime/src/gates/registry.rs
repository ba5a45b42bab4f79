//! The scenario's gates: arming at named points, pass-through, release, counters.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::counters::CounterTable;
use super::gate::PassCounts;
use super::{Counter, Counters, Gate, GateError, GatePoint};

/// The scenario's gates and operation counters. Shared (`Arc`) by the client and provisioning,
/// reached from a scenario with `live.gates()`.
///
/// - **Arming.** [`arm`](Gates::arm) pauses the next pass at a point, [`arm_nth`](Gates::arm_nth)
///   the Nth pass counted from the moment of arming (so `gate = "..."` on the attribute, armed
///   before the scenario starts, counts from the scenario's first operation). Un-armed passes go
///   straight through.
/// - **Release.** A gate stays closed until [`Gate::release`] (or [`Gates::release`] for every
///   gate at a point); once released it lets every operation through.
/// - **Teardown.** [`release_all`](Gates::release_all) releases every gate and opens the points
///   for good: the runner calls it when the scenario body ends, so stopping the agents never
///   waits on a gate nobody will release. A scenario that wants to pause the stop itself does
///   so inside its body (arm `stop`, stop the agent, wait until entered, release).
/// - **Counting.** Passes at some points count operations (see [`Counter`]); provisioning
///   counts process exits with [`count`](Gates::count).
#[derive(Debug, Default)]
pub struct Gates {
    passes: Arc<PassCounts>,
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
    /// `Live::new` calls this with `ScenarioOptions::gates`.
    pub fn from_names(names: &[&str]) -> Result<Gates, GateError> {
        let gates = Gates::default();
        let mut seen = Vec::new();
        for &name in names {
            let point = GatePoint::from_name(name).ok_or_else(|| GateError::UnknownPoint {
                name: name.to_owned(),
                expected: GatePoint::names_list(),
            })?;
            if seen.contains(&point) {
                return Err(GateError::DuplicatePoint {
                    name: name.to_owned(),
                });
            }
            seen.push(point);
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

    /// Arms a gate for the next pass at `point`: `arm_nth(point, 1)`.
    pub fn arm(&self, point: GatePoint) -> Arc<Gate> {
        self.arm_nth(point, 1)
    }

    /// Arms a gate for the `n`th pass at `point` counted from now (1 = the next one), e.g.
    /// `arm_nth(GatePoint::PromptDelivered, 2)` pauses the second prompt. Arming the same pass
    /// twice returns the same gate. After [`release_all`](Gates::release_all) the gate comes back
    /// already released. Panics if `n` is 0 (a bug in the scenario).
    pub fn arm_nth(&self, point: GatePoint, n: u64) -> Arc<Gate> {
        assert!(n >= 1, "arm_nth counts passes from 1 (the next pass)");
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
    pub fn gate(&self, point: GatePoint) -> Option<Arc<Gate>> {
        self.lock()
            .armed
            .iter()
            .rev()
            .find(|armed| armed.point == point)
            .map(|armed| armed.gate.clone())
    }

    /// Releases every gate armed at `point`. Later arming at `point` still works.
    pub fn release(&self, point: GatePoint) {
        for armed in self
            .lock()
            .armed
            .iter()
            .filter(|armed| armed.point == point)
        {
            armed.gate.release();
        }
    }

    /// Releases every gate and lets every later pass through, even at points armed afterwards.
    /// Teardown calls it before stopping agents, so nothing waits on a gate after the scenario
    /// body ended. Idempotent.
    pub fn release_all(&self) {
        let mut state = self.lock();
        state.opened_for_good = true;
        for armed in &state.armed {
            armed.gate.release();
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
