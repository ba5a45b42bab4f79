//! A gate: an operation enters it, announces that, and waits for the scenario to release it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::{GateError, GatePoint, Signal};
use crate::timeline::Lane;

/// How many times each point was passed, by [`GatePoint::index`]: kept by the registry, read by
/// the gates it armed to know which pass is theirs.
pub(crate) type PassCounts = [AtomicU64; GatePoint::ALL.len()];

/// A pause point for one operation: the operation calls [`enter`](Gate::enter), which publishes
/// "entered" and waits; the scenario waits until entered, does what must happen meanwhile, and
/// calls [`release`](Gate::release).
///
/// Release is sticky: once released, every later `enter` returns at once. Both sides are
/// cancel-safe: dropping an `enter` future leaves the gate entered (the operation got there) and
/// dropping a waiter affects no one else.
#[derive(Debug)]
pub struct Gate {
    name: String,
    // Where the report draws it: wire gates beside the product's requests, the rest as gates.
    lane: Lane,
    entered: Signal,
    released: Signal,
    armed: Option<Armed>,
}

/// Where a gate was armed, for diagnostics.
#[derive(Debug)]
struct Armed {
    nth: u64,
    base: u64,
    passes: Passes,
}

/// The pass count of the point a gate is armed at.
#[derive(Debug)]
enum Passes {
    /// A client point's, counted since the scenario started.
    Client(GatePoint, Arc<PassCounts>),
    /// A wire or product point's, counted since the point was first armed.
    Keyed(Arc<AtomicU64>),
}

impl Gate {
    /// A standalone gate called `name`, for a scenario's own coordination. Gates at gate points
    /// come from [`Gates::arm`](crate::gates::Gates::arm).
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            entered: Signal::new(format!("{name} entered")),
            released: Signal::new(format!("{name} released")),
            armed: None,
            name,
            lane: Lane::Gates,
        }
    }

    /// A gate for the `nth` pass at `point` after the point had seen `base` passes.
    pub(super) fn armed(point: GatePoint, nth: u64, base: u64, passes: Arc<PassCounts>) -> Self {
        let mut gate = Gate::new(point.name());
        gate.armed = Some(Armed {
            nth,
            base,
            passes: Passes::Client(point, passes),
        });
        gate
    }

    /// A gate called `spelling` for the `nth` pass at a wire or product point after it had seen
    /// `base` passes, noted in `lane`.
    pub(super) fn armed_keyed(
        spelling: String,
        lane: Lane,
        nth: u64,
        base: u64,
        passes: Arc<AtomicU64>,
    ) -> Self {
        let mut gate = Gate::new(spelling);
        gate.lane = lane;
        gate.armed = Some(Armed {
            nth,
            base,
            passes: Passes::Keyed(passes),
        });
        gate
    }

    /// The gate's name: its point's attribute name or spelling (`abort`,
    /// `request POST /session/{id}/abort`, `product before_save`), or the name given to
    /// [`Gate::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The client point this gate is armed at, if it came from
    /// [`Gates::arm`](crate::gates::Gates::arm) (`None` for wire and product gates: their
    /// [`name`](Gate::name) is their spelling).
    pub fn point(&self) -> Option<GatePoint> {
        match self.armed.as_ref()?.passes {
            Passes::Client(point, _) => Some(point),
            Passes::Keyed(_) => None,
        }
    }

    /// Publishes "entered" and waits until the gate is released (at once if it already is).
    pub async fn enter(&self) {
        use crate::timeline::note_keyed;
        note_keyed(self.lane, "entered", &self.name, String::new);
        self.entered.publish();
        self.released.wait().await;
        note_keyed(self.lane, "released", &self.name, String::new);
    }

    /// Waits until an operation entered the gate, without a ceiling. Prefer
    /// [`wait_until_entered_within`](Gate::wait_until_entered_within) in scenarios.
    pub async fn wait_until_entered(&self) {
        self.entered.wait().await;
    }

    /// Waits until an operation entered the gate, at most `ceiling` scaled by
    /// `LIVE_TIMEOUT_SCALE`. The error names the gate and how far its point got.
    pub async fn wait_until_entered_within(&self, ceiling: Duration) -> Result<(), GateError> {
        let ceiling = crate::settings::scaled(ceiling);
        tokio::time::timeout(ceiling, self.entered.wait())
            .await
            .map_err(|_| GateError::NeverEntered {
                gate: self.name().to_owned(),
                detail: self.progress(),
                ceiling,
            })
    }

    /// Releases the gate: the operation inside (and every later one) continues.
    pub fn release(&self) {
        self.released.publish();
    }

    /// Whether an operation entered the gate.
    pub fn is_entered(&self) -> bool {
        self.entered.is_published()
    }

    /// Whether the gate was released.
    pub fn is_released(&self) -> bool {
        self.released.is_published()
    }

    /// Which pass the gate waits for and how far its point got, for the ceiling error.
    fn progress(&self) -> String {
        match &self.armed {
            Some(armed) => {
                let passes = match &armed.passes {
                    Passes::Client(point, passes) => passes[point.index()].load(Ordering::SeqCst),
                    Passes::Keyed(passes) => passes.load(Ordering::SeqCst),
                };
                let seen = passes.saturating_sub(armed.base);
                format!(
                    "armed for pass {} after arming; the point was passed {seen} time(s) since",
                    armed.nth
                )
            }
            None => "nothing called enter".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::gates::{GatePoint, Gates};
    use crate::timeline::{Collector, install_on_this_thread};

    /// The run report's gates lane: a gate point armed, entered, then released, in that order.
    #[tokio::test]
    async fn a_gate_notes_armed_entered_and_released_for_the_report() {
        let collector = Collector::new();
        install_on_this_thread(Some(collector.clone()));
        let gates = Arc::new(Gates::from_names(&[]).unwrap());
        let gate = gates.arm(GatePoint::PromptDelivered);
        let passing = {
            let gates = gates.clone();
            tokio::spawn(async move { gates.pass(GatePoint::PromptDelivered).await })
        };
        gate.wait_until_entered().await;
        gate.release();
        passing.await.unwrap();
        install_on_this_thread(None);
        let entries = collector.take().entries;
        let kinds: Vec<&str> = entries.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["armed", "entered", "released"]);
        assert!(
            entries
                .iter()
                .all(|e| e.key.as_deref() == Some("prompt_delivered")),
            "{entries:?}"
        );
    }
}
