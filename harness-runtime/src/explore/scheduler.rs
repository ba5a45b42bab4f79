//! The scheduler of one exploring run: holds every step at a decision point until the system is
//! quiet, then lets one go, chosen by the run's strategy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Step;
use super::strategy::{Chosen, Strategy, labels};
use super::trace::{Decision, Released, RunRecord};
use crate::gates::WirePoint;
use crate::timeline::{Lane, note};

/// The event type sent every few seconds: never a decision point (its number depends on time).
const HEARTBEAT: &str = "server.heartbeat";

/// The event families about sessions: their events are decision points by default. Events about
/// the server itself (`server.*`, `plugin.added`, `catalog.updated`, …: a workspace's first
/// request loads its plugins, some fifty events) are delivered in order but only count as
/// activity, unless `explore_points` names them.
const SESSION_EVENTS: [&str; 5] = ["session.", "message.", "permission.", "question.", "todo."];

/// Which steps are decision points: all of them (events about sessions only), or those an
/// `explore_points` spelling names.
#[derive(Debug, Default)]
pub(crate) struct Focus {
    wire: Vec<WirePoint>,
    products: Vec<String>,
}

impl Focus {
    /// From `explore_points` spellings (checked at compile time; an unparsable one is a bug).
    /// Empty: every step.
    pub(crate) fn from_points(points: &[&str]) -> Focus {
        let mut focus = Focus::default();
        for point in points {
            if let Some(name) = point.strip_prefix("product ") {
                focus.products.push(name.trim().to_owned());
            } else {
                match WirePoint::parse(point) {
                    Ok(wire) => focus.wire.push(wire),
                    Err(error) => panic!("invalid `explore_points` spelling: {error}"),
                }
            }
        }
        focus
    }

    fn is_all(&self) -> bool {
        self.wire.is_empty() && self.products.is_empty()
    }

    fn request(&self, method: &str, path: &str) -> bool {
        self.is_all()
            || self
                .wire
                .iter()
                .any(|p| matches!(p, WirePoint::Request(r) if r.matches(method, path)))
    }

    fn response(&self, method: &str, path: &str) -> bool {
        self.is_all()
            || self
                .wire
                .iter()
                .any(|p| matches!(p, WirePoint::Response(r) if r.matches(method, path)))
    }

    fn event(&self, event_type: &str) -> bool {
        (self.is_all()
            && SESSION_EVENTS
                .iter()
                .any(|family| event_type.starts_with(family)))
            || self
                .wire
                .iter()
                .any(|p| matches!(p, WirePoint::Event(e) if e.as_str() == event_type))
    }

    fn product(&self, name: &str) -> bool {
        self.is_all() || self.products.iter().any(|p| p == name)
    }
}

/// A request that went through its decision point: its response's step belongs to it.
#[derive(Clone, Debug)]
pub(crate) struct Exchange {
    method: String,
    route: String,
    ordinal: u32,
    focused_response: bool,
}

/// The scheduler of one run. Shared by the scenario's forwarders and product points.
pub(crate) struct Scheduler {
    state: Mutex<State>,
    changed: Notify,
    quiet: Duration,
    focus: Focus,
    driver: Mutex<Option<AbortHandle>>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("held", &self.held_labels())
            .finish_non_exhaustive()
    }
}

struct State {
    /// Stopped (teardown, or the plan diverged): nothing is held any more.
    stopped: bool,
    strategy: Box<dyn Strategy>,
    /// Oldest first.
    held: Vec<Held>,
    /// The last arrival, activity or release.
    last_change: Instant,
    record: RunRecord,
    /// Requests so far by `METHOD route`; product passes by name; event streams opened.
    exchanges: HashMap<String, u32>,
    passes: HashMap<String, u32>,
    streams: u32,
}

struct Held {
    step: Step,
    release: oneshot::Sender<()>,
}

impl Scheduler {
    /// A scheduler choosing with `strategy`, deciding once the system was quiet for `quiet`,
    /// holding the steps `focus` names. Its driver runs on the current tokio runtime until
    /// [`stop`](Scheduler::stop).
    pub(crate) fn start(
        strategy: Box<dyn Strategy>,
        quiet: Duration,
        focus: Focus,
    ) -> Arc<Scheduler> {
        let scheduler = Arc::new(Scheduler {
            state: Mutex::new(State {
                stopped: false,
                strategy,
                held: Vec::new(),
                last_change: Instant::now(),
                record: RunRecord::default(),
                exchanges: HashMap::new(),
                passes: HashMap::new(),
                streams: 0,
            }),
            changed: Notify::new(),
            quiet,
            focus,
            driver: Mutex::new(None),
        });
        let driver = tokio::spawn(drive(scheduler.clone()));
        *lock(&scheduler.driver) = Some(driver.abort_handle());
        scheduler
    }

    /// A product's request of `method path` (`route` is how OpenCode's API spells it) reached
    /// the forwarder: returns when it may be forwarded.
    pub(crate) async fn request(&self, method: &str, path: &str, route: &str) -> Exchange {
        let ordinal = {
            let mut state = self.lock();
            let count = state
                .exchanges
                .entry(format!("{method} {route}"))
                .or_default();
            *count += 1;
            *count
        };
        let exchange = Exchange {
            method: method.to_owned(),
            route: route.to_owned(),
            ordinal,
            focused_response: self.focus.response(method, path),
        };
        if self.focus.request(method, path) {
            self.hold(Step::request(method, route, ordinal)).await;
        } else {
            self.activity();
        }
        exchange
    }

    /// The agent answered `exchange`: returns when the product may have the response.
    pub(crate) async fn response(&self, exchange: &Exchange) {
        if exchange.focused_response {
            let step = Step::response(&exchange.method, &exchange.route, exchange.ordinal);
            self.hold(step).await;
        } else {
            self.activity();
        }
    }

    /// A product opened an event stream: its number (1-based, in the order they opened).
    pub(crate) fn open_stream(&self) -> u32 {
        let mut state = self.lock();
        state.streams += 1;
        state.streams
    }

    /// An event of `event_type` is next on stream `stream`: returns when it may be delivered.
    pub(crate) async fn event(&self, stream: u32, event_type: &str) {
        if event_type == HEARTBEAT {
            return;
        }
        if self.focus.event(event_type) {
            self.hold(Step::event(stream, event_type)).await;
        } else {
            self.activity();
        }
    }

    /// The product passes its point `name`: returns when it may go on.
    pub(crate) async fn product(&self, name: &str) {
        let ordinal = {
            let mut state = self.lock();
            let count = state.passes.entry(name.to_owned()).or_default();
            *count += 1;
            *count
        };
        if self.focus.product(name) {
            self.hold(Step::product(name, ordinal)).await;
        } else {
            self.activity();
        }
    }

    /// Traffic that is not a decision point: the system is not quiet yet.
    pub(crate) fn activity(&self) {
        self.lock().last_change = Instant::now();
        self.changed.notify_one();
    }

    /// Lets everything held go, in order, and every later step through at once. Teardown calls
    /// it, so nothing waits on a scheduler after the body ended. Idempotent.
    pub(crate) fn stop(&self) {
        if let Some(driver) = lock(&self.driver).take() {
            driver.abort();
        }
        let mut state = self.lock();
        state.stopped = true;
        for held in state.held.drain(..) {
            let _ = held.release.send(());
        }
    }

    /// The run's record: decisions, released steps, and where the plan did not fit (including
    /// a plan not carried out whole by now: call it when the run ended).
    pub(crate) fn record(&self) -> RunRecord {
        let state = self.lock();
        let mut record = state.record.clone();
        if record.divergence.is_none() {
            record.divergence = state.strategy.unfinished(record.decisions.len() as u32);
        }
        record
    }

    /// The labels of the steps held now, oldest first: what a run that hit its ceiling waited on.
    pub(crate) fn held_labels(&self) -> Vec<String> {
        self.lock()
            .held
            .iter()
            .map(|held| held.step.label.clone())
            .collect()
    }

    async fn hold(&self, step: Step) {
        let (release, released) = oneshot::channel();
        {
            let mut state = self.lock();
            if state.stopped {
                return;
            }
            state.held.push(Held { step, release });
            state.last_change = Instant::now();
        }
        self.changed.notify_one();
        // The sender is dropped only after sending, or with the scheduler (teardown): go on.
        let _ = released.await;
    }

    /// When the next step may go: `None` while nothing is held.
    fn due(&self) -> Option<Instant> {
        let state = self.lock();
        (!state.held.is_empty()).then(|| state.last_change + self.quiet)
    }

    /// Lets one held step go: the only one, or the one the strategy chooses.
    fn release_one(&self) {
        let mut state = self.lock();
        let state = &mut *state;
        if state.held.is_empty() || state.stopped {
            return;
        }
        let (index, decision) = if state.held.len() == 1 {
            (0, None)
        } else {
            let n = state.record.decisions.len() as u32 + 1;
            let held: Vec<&Step> = state.held.iter().map(|h| &h.step).collect();
            match state.strategy.choose(n, &held) {
                Chosen::Index(index) => (index.min(held.len() - 1), Some(n)),
                Chosen::Diverged(why) => {
                    note(Lane::Wire, "schedule diverged", || why.clone());
                    state.record.divergence = Some(why);
                    // Unscheduled from here: everything held goes, in order, and nothing more
                    // is held.
                    state.stopped = true;
                    for held in state.held.drain(..) {
                        state.record.released.push(Released {
                            step: held.step,
                            decision: None,
                            deviated: false,
                            held_with: Vec::new(),
                        });
                        let _ = held.release.send(());
                    }
                    return;
                }
            }
        };
        let held_with: Vec<String> = state
            .held
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, h)| h.step.label.clone())
            .collect();
        if let Some(n) = decision {
            let steps: Vec<Step> = state.held.iter().map(|h| h.step.clone()).collect();
            note(Lane::Wire, "decision", || {
                format!(
                    "{n}: {} goes; held: {}",
                    steps[index].label,
                    labels(&steps.iter().collect::<Vec<_>>())
                )
            });
            state.record.decisions.push(Decision {
                n,
                held: steps,
                chosen: index,
            });
        }
        let held = state.held.remove(index);
        state.record.released.push(Released {
            step: held.step,
            decision,
            deviated: decision.is_some() && index != 0,
            held_with,
        });
        state.last_change = Instant::now();
        let _ = held.release.send(());
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

/// The driver: whenever something is held and the system was quiet long enough, one step goes.
async fn drive(scheduler: Arc<Scheduler>) {
    loop {
        let changed = scheduler.changed.notified();
        match scheduler.due() {
            None => changed.await,
            Some(due) if Instant::now() < due => {
                tokio::select! {
                    () = changed => {}
                    () = tokio::time::sleep_until(due) => {}
                }
            }
            Some(_) => scheduler.release_one(),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // No code panics while holding these locks; recover rather than cascade a poisoned state.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::super::Schedule;
    use super::super::strategy::Plan;
    use super::*;

    const QUIET: Duration = Duration::from_millis(20);

    /// Two product points held together: the default takes the older, a schedule the other.
    #[tokio::test]
    async fn held_steps_go_one_at_a_time_in_the_chosen_order() {
        for (schedule, expected) in [("fifo", ["a", "b"]), ("1=067a", ["b", "a"])] {
            let plan = Plan::Replay(Schedule::parse(schedule).unwrap());
            let scheduler = Scheduler::start(plan.strategy(), QUIET, Focus::default());
            let order = Arc::new(Mutex::new(Vec::new()));
            let pass = |name: &'static str| {
                let (scheduler, order) = (scheduler.clone(), order.clone());
                async move {
                    scheduler.product(name).await;
                    order.lock().unwrap().push(name);
                }
            };
            let a = tokio::spawn(pass("a"));
            // `b` arrives second, within the quiet window: both are held at decision 1.
            tokio::time::sleep(Duration::from_millis(2)).await;
            let b = tokio::spawn(pass("b"));
            let (a, b) = tokio::join!(a, b);
            a.unwrap();
            b.unwrap();
            assert_eq!(*order.lock().unwrap(), expected, "schedule {schedule}");
            let record = scheduler.record();
            assert_eq!(record.decisions.len(), 1);
            assert_eq!(record.schedule().to_string(), schedule);
            assert_eq!(record.divergence, None);
            scheduler.stop();
        }
    }

    #[test]
    fn the_tag_in_the_test_above_is_product_b() {
        assert_eq!(format!("{:04x}", Step::product("b", 1).tag()), "067a");
    }

    #[tokio::test]
    async fn a_step_the_schedule_does_not_know_diverges_and_the_run_goes_on_unscheduled() {
        let plan = Plan::Replay(Schedule::parse("1=0000").unwrap());
        let scheduler = Scheduler::start(plan.strategy(), QUIET, Focus::default());
        let a = tokio::spawn({
            let s = scheduler.clone();
            async move { s.product("a").await }
        });
        let b = tokio::spawn({
            let s = scheduler.clone();
            async move { s.product("b").await }
        });
        let _ = tokio::join!(a, b);
        // Later steps pass at once.
        tokio::time::timeout(Duration::from_secs(1), scheduler.product("c"))
            .await
            .expect("an unscheduled run holds nothing");
        let record = scheduler.record();
        let divergence = record.divergence.expect("diverged");
        assert!(divergence.contains("at decision 1"), "{divergence}");
        scheduler.stop();
    }

    #[tokio::test]
    async fn unfocused_steps_pass_at_once_and_stop_releases_what_is_held() {
        let focus = Focus::from_points(&["product held"]);
        let plan = Plan::Replay(Schedule::default());
        let scheduler = Scheduler::start(plan.strategy(), Duration::from_secs(3600), focus);
        tokio::time::timeout(Duration::from_secs(1), scheduler.product("free"))
            .await
            .expect("an unfocused point is not held");
        let held = tokio::spawn({
            let s = scheduler.clone();
            async move { s.product("held").await }
        });
        while scheduler.held_labels().is_empty() {
            tokio::task::yield_now().await;
        }
        assert_eq!(scheduler.held_labels(), ["product held"]);
        scheduler.stop();
        tokio::time::timeout(Duration::from_secs(1), held)
            .await
            .expect("stop releases")
            .unwrap();
        assert!(scheduler.record().decisions.is_empty());
    }
}
