//! The scheduler of one exploring run: holds every step at a decision point until the system is
//! quiet, then lets one go, chosen by the run's strategy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use super::Step;
use super::focus::{Focus, Point};
use super::strategy::{Strategy, labels};
use super::trace::{Decision, Released, RunRecord};
use crate::timeline::{Lane, note};

/// The event type sent every few seconds: never a decision point (its number depends on time).
const HEARTBEAT: &str = "server.heartbeat";

/// How long the scheduler waits for the agent to settle after a step set it working (scaled by
/// the runner, and within the run's own ceiling): past it, the next step goes anyway and the
/// run's record says so. An agent always settles (its next model request, an ask, idle, an
/// error); on a loaded machine that can take seconds, and going on earlier would make the
/// machine's load, not the schedule, decide whether the product's step came first.
pub(crate) const SETTLE_CEILING: Duration = Duration::from_secs(30);

/// The agent's events after which it waits on someone else (the product, or nobody): it settled.
/// A model request it sends settles it too (the scripted model holds the answer).
const SETTLED_BY: [&str; 4] = [
    "session.idle",
    "permission.asked",
    "question.asked",
    "session.error",
];

/// How many quiet windows a model answer held alone waits before it goes. By default the agent
/// is slower than its product: on a loaded machine the product can take longer than one window
/// to send the step its last response set off, and the answer going first then would be the
/// machine's timing, not the schedule's choice (seen in CI: the lost turn "found" that way, its
/// line not replaying). Product steps held alone still go after one window.
const AGENT_PATIENCE: u32 = 5;

/// The routes of requests that set the agent working (a turn starts), by how they end.
const PROMPT_ROUTES: [&str; 4] = ["/prompt_async", "/message", "/command", "/shell"];

/// The `POST` routes (as OpenCode's API spells them) that OpenCode answers only once a model
/// turn ended: while it answers one of them the agent waits on its model, which settles it.
const ANSWERED_WITH_THE_TURN: [&str; 8] = [
    "/session/{sessionID}/message",
    "/session/{sessionID}/command",
    "/session/{sessionID}/shell",
    "/session/{sessionID}/init",
    "/session/{sessionID}/summarize",
    "/api/session/{sessionID}/prompt",
    "/api/session/{sessionID}/wait",
    "/api/session/{sessionID}/compact",
];

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
    /// The agent's progress is a dimension of the schedule: the scripted model's answers are
    /// decision points, and after a step that sets the agent working, or while it answers a
    /// request, nothing else goes until it settled (or this ceiling passed).
    progress: Option<Duration>,
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
    /// In canonical order ([`Held::key`]).
    held: Vec<Held>,
    /// Steps released so far.
    releases: u64,
    /// The last arrival, activity or release.
    last_change: Instant,
    record: RunRecord,
    /// Requests so far by `METHOD route`; product passes by name; event streams opened.
    exchanges: HashMap<String, u32>,
    passes: HashMap<String, u32>,
    /// Events seen so far on each stream (index: stream number - 1).
    streams: Vec<u32>,
    /// The scripted model's answers so far (title requests not counted).
    models: u32,
    /// The agent works on what a released step set off: what, and since when.
    working: Option<(Instant, String)>,
    /// The product's requests the agent is answering (by [`Answering`] number): what, and since
    /// when. Until it answered, the agent has not settled either: a product that subscribed
    /// has its stream once the agent answered, and a model answer that went before would let
    /// the agent run ahead of a subscription it had not made yet, by the machine's timing.
    answering: HashMap<u64, (Instant, String)>,
    /// The number of the next [`Answering`].
    answerings: u64,
}

struct Held {
    step: Step,
    /// How many steps had gone when it arrived.
    epoch: u64,
    /// What the agent works on once this step went (the agent's progress as a dimension).
    sets_working: Option<String>,
    release: oneshot::Sender<()>,
}

impl Held {
    /// The canonical order: the model's answers after everything else (by default the agent is
    /// slower than its product: a schedule deviates to let the agent run ahead); steps that
    /// arrived before a release come before those that came after it; among those that arrived
    /// between the same two releases (set off by one cause, their arrival order is the
    /// machine's load, not the product's), by tag, then place.
    fn key(&self) -> (bool, u64, u16, u32) {
        let id = self.step.id();
        (
            self.step.kind == super::step::StepKind::Model,
            self.epoch,
            id.tag,
            id.seq,
        )
    }
}

impl Scheduler {
    /// A scheduler of the product's steps only, choosing with `strategy`, deciding once the
    /// system was quiet for `quiet`, holding the steps `focus` names: for gates whose model and
    /// observer it cannot hear (the benchmark's [`ExploringRun`](crate::testing)), the agent's
    /// progress is no dimension. Its driver runs on the current tokio runtime until
    /// [`stop`](Scheduler::stop).
    #[cfg_attr(not(any(test, feature = "testing")), allow(dead_code))]
    pub(crate) fn start(
        strategy: Box<dyn Strategy>,
        quiet: Duration,
        focus: Focus,
    ) -> Arc<Scheduler> {
        Self::starting(strategy, quiet, focus, None)
    }

    /// A scheduler of an exploring run, whose scripted model and observer report to it: when
    /// `focus` holds the model's answers, the agent's progress is a dimension of the schedule,
    /// and after a step that set the agent working the next waits until it settled, at most
    /// `settle`.
    pub(crate) fn start_settling(
        strategy: Box<dyn Strategy>,
        quiet: Duration,
        focus: Focus,
        settle: Duration,
    ) -> Arc<Scheduler> {
        let progress = focus.holds(&Point::Model).then_some(settle);
        Self::starting(strategy, quiet, focus, progress)
    }

    fn starting(
        strategy: Box<dyn Strategy>,
        quiet: Duration,
        focus: Focus,
        progress: Option<Duration>,
    ) -> Arc<Scheduler> {
        let scheduler = Arc::new(Scheduler {
            state: Mutex::new(State {
                stopped: false,
                strategy,
                held: Vec::new(),
                releases: 0,
                last_change: Instant::now(),
                record: RunRecord::default(),
                exchanges: HashMap::new(),
                passes: HashMap::new(),
                streams: Vec::new(),
                models: 0,
                working: None,
                answering: HashMap::new(),
                answerings: 0,
            }),
            changed: Notify::new(),
            quiet,
            focus,
            progress,
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
            focused_response: self.focus.holds(&Point::Response { method, path }),
        };
        let starts_turn = (self.progress.is_some()
            && method == "POST"
            && PROMPT_ROUTES.iter().any(|end| route.ends_with(end)))
        .then(|| "working on the prompt".to_owned());
        if self.focus.holds(&Point::Request { method, path }) {
            self.hold_setting(Step::request(method, route, ordinal), starts_turn)
                .await;
        } else {
            if let Some(doing) = starts_turn {
                self.lock().working = Some((Instant::now(), doing));
            }
            self.activity();
        }
        exchange
    }

    /// The scripted model got a request of the agent's (`title`: OpenCode's title generation,
    /// which runs beside the turn and passes at once): returns when it may answer. `hangs`: the
    /// answer sends nothing, so the agent keeps waiting on the model after it went.
    pub(crate) async fn model(&self, title: bool, hangs: bool) {
        if title || self.progress.is_none() {
            self.activity();
            return;
        }
        let ordinal = {
            let mut state = self.lock();
            state.models += 1;
            // The agent waits on the model now: it settled.
            state.working = None;
            state.models
        };
        let working = (!hangs).then(|| format!("working on model answer {ordinal}"));
        self.hold_setting(Step::model(ordinal), working).await;
    }

    /// The agent's own stream (the runner's observer) carried an event of `event_type`: the
    /// agent progressed, and after some events it waits on someone else (it settled).
    pub(crate) fn agent_event(&self, event_type: &str) {
        if self.progress.is_none() || event_type == HEARTBEAT {
            return;
        }
        {
            let mut state = self.lock();
            if SETTLED_BY.contains(&event_type) {
                state.working = None;
            }
            state.last_change = Instant::now();
        }
        self.changed.notify_one();
    }

    /// The agent has the product's request of `method route` to answer: until the returned
    /// guard is dropped (the agent answered, or the request was given up), the agent has not
    /// settled. `None` where the agent's progress is no dimension, or the request is answered
    /// only once the turn ended ([`ANSWERED_WITH_THE_TURN`]: the agent waits on the model then).
    pub(crate) fn answering(self: &Arc<Self>, method: &str, route: &str) -> Option<Answering> {
        if self.progress.is_none() || (method == "POST" && ANSWERED_WITH_THE_TURN.contains(&route))
        {
            return None;
        }
        let mut state = self.lock();
        state.answerings += 1;
        let number = state.answerings;
        let doing = format!("answering {method} {route}");
        state.answering.insert(number, (Instant::now(), doing));
        Some(Answering {
            scheduler: self.clone(),
            number,
        })
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
        state.streams.push(0);
        state.streams.len() as u32
    }

    /// An event of `event_type` is next on stream `stream`: returns when it may be delivered.
    pub(crate) async fn event(&self, stream: u32, event_type: &str) {
        if event_type == HEARTBEAT {
            return;
        }
        if !self.focus.holds(&Point::Event(event_type)) {
            self.activity();
            return;
        }
        // Places count the stream's decision points only: how many events about the server
        // itself came between them depends on its plugins, not on the product.
        let seq = {
            let mut state = self.lock();
            match state.streams.get_mut(stream as usize - 1) {
                Some(seen) => {
                    *seen += 1;
                    *seen
                }
                None => 1,
            }
        };
        self.hold(Step::event(stream, seq, event_type)).await;
    }

    /// The product passes its point `name`: returns when it may go on.
    pub(crate) async fn product(&self, name: &str) {
        let ordinal = {
            let mut state = self.lock();
            let count = state.passes.entry(name.to_owned()).or_default();
            *count += 1;
            *count
        };
        if self.focus.holds(&Point::Product(name)) {
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
        self.hold_setting(step, None).await;
    }

    /// Holds `step`; once it went, the agent works on `sets_working` until it settles.
    async fn hold_setting(&self, step: Step, sets_working: Option<String>) {
        let (release, released) = oneshot::channel();
        {
            let mut state = self.lock();
            if state.stopped {
                return;
            }
            let held = Held {
                step,
                epoch: state.releases,
                sets_working,
                release,
            };
            let at = state.held.partition_point(|h| h.key() <= held.key());
            state.held.insert(at, held);
            state.last_change = Instant::now();
        }
        self.changed.notify_one();
        // The sender is dropped only after sending, or with the scheduler (teardown): go on.
        let _ = released.await;
    }

    /// When the next step may go: `None` while nothing is held. While the agent works on what a
    /// step set off or answers a request, once it settled (or at the ceiling).
    fn due(&self) -> Option<Instant> {
        let state = self.lock();
        if state.held.is_empty() {
            return None;
        }
        let unsettled_since = state.unsettled().map(|(since, _)| since).min();
        let only_the_agent = state
            .held
            .iter()
            .all(|held| held.step.kind == super::step::StepKind::Model);
        Some(match (unsettled_since, self.progress) {
            (Some(since), Some(ceiling)) => since + ceiling,
            _ if only_the_agent => state.last_change + self.quiet * AGENT_PATIENCE,
            _ => state.last_change + self.quiet,
        })
    }

    /// Lets one held step go: the only one, or the one the strategy chooses.
    fn release_one(&self) {
        let mut state = self.lock();
        let state = &mut *state;
        if state.held.is_empty() || state.stopped {
            return;
        }
        // What the agent had not finished when the ceiling let this step go, oldest first; past
        // it, none of it holds anything any more.
        let mut unsettled: Vec<(Instant, String)> = state
            .unsettled()
            .map(|(since, doing)| (since, doing.to_owned()))
            .collect();
        unsettled.sort();
        state.working = None;
        state.answering.clear();
        let (index, decision) = if state.held.len() == 1 {
            (0, None)
        } else {
            let n = state.record.decisions.len() as u32 + 1;
            let held: Vec<&Step> = state.held.iter().map(|h| &h.step).collect();
            let index = state.strategy.choose(n, &held);
            (index.min(held.len() - 1), Some(n))
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
        if let Some(ceiling) = self.progress.filter(|_| !unsettled.is_empty()) {
            let doing: Vec<String> = unsettled.into_iter().map(|(_, doing)| doing).collect();
            let unsettled = format!(
                "the agent had not settled within {ceiling:?} (it was {}) when {} went",
                doing.join(", "),
                held.step.label
            );
            note(Lane::Wire, "unsettled", || unsettled.clone());
            state.record.unsettled.push(unsettled);
        }
        if let Some(doing) = &held.sets_working {
            state.working = Some((Instant::now(), doing.clone()));
        }
        state.releases += 1;
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

impl State {
    /// What the agent is doing that it was set off on and has not finished (a prompt or model
    /// answer it works on, a request it answers), each since when.
    fn unsettled(&self) -> impl Iterator<Item = (Instant, &str)> {
        let working = self.working.iter();
        working
            .chain(self.answering.values())
            .map(|(since, doing)| (*since, doing.as_str()))
    }
}

/// The agent has a product's request to answer ([`Scheduler::answering`]): dropped once it
/// answered or the request was given up.
pub(crate) struct Answering {
    scheduler: Arc<Scheduler>,
    number: u64,
}

impl Drop for Answering {
    fn drop(&mut self) {
        let mut state = self.scheduler.lock();
        state.answering.remove(&self.number);
        state.last_change = Instant::now();
        drop(state);
        self.scheduler.changed.notify_one();
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

    /// Passes product points `names` (each once the previous one is held, within the quiet
    /// window: all are held together) and returns the order they went in.
    async fn pass_all(scheduler: &Arc<Scheduler>, names: &[&'static str]) -> Vec<&'static str> {
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut passes = Vec::new();
        for (arrived, &name) in names.iter().enumerate() {
            let (passing, order) = (scheduler.clone(), order.clone());
            passes.push(tokio::spawn(async move {
                passing.product(name).await;
                order.lock().unwrap().push(name);
            }));
            // The arrival order is the test's: the next one comes once this one is held.
            while scheduler.held_labels().len() <= arrived {
                tokio::task::yield_now().await;
            }
        }
        for pass in passes {
            pass.await.unwrap();
        }
        order.lock().unwrap().clone()
    }

    /// `a` and `b` in the canonical order of two steps that arrived together (by tag).
    fn by_tag() -> [&'static str; 2] {
        if Step::product("a", 1).id() < Step::product("b", 1).id() {
            ["a", "b"]
        } else {
            ["b", "a"]
        }
    }

    /// Two product points held together: the default takes the first in canonical order
    /// whichever arrived first, a schedule the other.
    #[tokio::test]
    async fn held_steps_go_one_at_a_time_in_the_chosen_order() {
        let [first, second] = by_tag();
        let deviation = format!(
            "{}>{}",
            Step::product(second, 1).id(),
            Step::product(first, 1).id()
        );
        let cases = [
            ("fifo", [first, second], [first, second]),
            ("fifo", [second, first], [first, second]),
            (deviation.as_str(), [first, second], [second, first]),
        ];
        for (schedule, arrival, expected) in cases {
            let plan = Plan::Replay(Schedule::parse(schedule).unwrap());
            let scheduler = Scheduler::start(plan.strategy(), QUIET, Focus::all());
            assert_eq!(
                pass_all(&scheduler, &arrival).await,
                expected,
                "{schedule}, arriving {arrival:?}"
            );
            let record = scheduler.record();
            assert_eq!(record.decisions.len(), 1);
            assert_eq!(record.schedule().to_string(), schedule);
            assert_eq!(record.divergence, None);
            scheduler.stop();
        }
    }

    /// A deviation between steps this run never holds together does not come up: the run takes
    /// the default order, and its record says which deviation never came.
    #[tokio::test]
    async fn a_deviation_that_never_comes_up_is_reported() {
        let plan = Plan::Replay(Schedule::parse("0000.1>0001.1").unwrap());
        let scheduler = Scheduler::start(plan.strategy(), QUIET, Focus::all());
        assert_eq!(pass_all(&scheduler, &["a", "b"]).await, by_tag());
        let divergence = scheduler.record().divergence.expect("not carried out");
        assert!(
            divergence.starts_with("its deviation 0000.1>0001.1 never came up"),
            "{divergence}"
        );
        scheduler.stop();
    }

    #[tokio::test]
    async fn unfocused_steps_pass_at_once_and_stop_releases_what_is_held() {
        let focus = Focus::only(|point| matches!(point, Point::Product("held")));
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

    /// A scheduler of the default order whose agent's progress is a dimension, the agent
    /// settling within `ceiling`.
    fn settling(ceiling: Duration) -> Arc<Scheduler> {
        let plan = Plan::Replay(Schedule::default());
        Scheduler::start_settling(plan.strategy(), QUIET, Focus::all(), ceiling)
    }

    /// The agent asks the model (its answer held like any step); `order` gets `model` once the
    /// answer went.
    fn model_answer(
        scheduler: &Arc<Scheduler>,
        order: &Arc<Mutex<Vec<&'static str>>>,
    ) -> tokio::task::JoinHandle<()> {
        let (s, order) = (scheduler.clone(), order.clone());
        tokio::spawn(async move {
            s.model(false, false).await;
            order.lock().unwrap().push("model");
        })
    }

    /// The product passes its point `subscribe`; `order` gets `product` once it went.
    fn product_step(
        scheduler: &Arc<Scheduler>,
        order: &Arc<Mutex<Vec<&'static str>>>,
    ) -> tokio::task::JoinHandle<()> {
        let (s, order) = (scheduler.clone(), order.clone());
        tokio::spawn(async move {
            s.product("subscribe").await;
            order.lock().unwrap().push("product");
        })
    }

    /// Waits (a few seconds at most) until `scheduler` holds `n` steps.
    async fn until_held(scheduler: &Arc<Scheduler>, n: usize) {
        tokio::time::timeout(Duration::from_secs(5), async {
            while scheduler.held_labels().len() < n {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the steps are held");
    }

    /// A model answer held with a product point: by default the product goes first (the agent
    /// is slower than its product); a schedule lets the agent run ahead.
    #[tokio::test]
    async fn the_model_answers_after_the_product_unless_the_schedule_lets_the_agent_run_ahead() {
        let ahead = format!(
            "{}>{}",
            Step::model(1).id(),
            Step::product("subscribe", 1).id()
        );
        for (schedule, expected) in [
            ("fifo", ["product", "model"]),
            (&ahead, ["model", "product"]),
        ] {
            let plan = Plan::Replay(Schedule::parse(schedule).unwrap());
            let scheduler = Scheduler::start_settling(
                plan.strategy(),
                QUIET,
                Focus::all(),
                Duration::from_millis(50),
            );
            let order = Arc::new(Mutex::new(Vec::new()));
            let model = model_answer(&scheduler, &order);
            until_held(&scheduler, 1).await;
            let product = product_step(&scheduler, &order);
            model.await.unwrap();
            product.await.unwrap();
            assert_eq!(*order.lock().unwrap(), expected, "{schedule}");
            let record = scheduler.record();
            assert_eq!(record.schedule().to_string(), schedule);
            assert_eq!(record.divergence, None);
            scheduler.stop();
        }
    }

    /// A model answer held alone waits several quiet windows: a product step that comes three
    /// windows later (a product slowed by a loaded machine) still goes first, as by default.
    #[tokio::test]
    async fn a_lone_model_answer_gives_a_slow_product_its_turn_first() {
        let scheduler = settling(Duration::from_secs(60));
        let order = Arc::new(Mutex::new(Vec::new()));
        let model = model_answer(&scheduler, &order);
        until_held(&scheduler, 1).await;
        tokio::time::sleep(QUIET * 3).await;
        let product = product_step(&scheduler, &order);
        model.await.unwrap();
        product.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["product", "model"]);
        scheduler.stop();
    }

    /// After a model answer went, the agent works on it: nothing else goes until its stream says
    /// it settled (idle, an ask, an error) or it sends the model another request.
    #[tokio::test]
    async fn nothing_goes_while_the_agent_works_on_a_released_answer() {
        let scheduler = settling(Duration::from_secs(60));
        scheduler.model(false, false).await;
        let product = tokio::spawn({
            let s = scheduler.clone();
            async move { s.product("read_messages").await }
        });
        until_held(&scheduler, 1).await;
        // Events that do not settle it are progress, not an end.
        scheduler.agent_event("message.part.updated");
        tokio::time::sleep(QUIET * 10).await;
        assert_eq!(scheduler.held_labels(), ["product read_messages"]);
        scheduler.agent_event("session.idle");
        tokio::time::timeout(Duration::from_secs(5), product)
            .await
            .expect("the product goes once the agent settled")
            .unwrap();
        assert!(scheduler.record().unsettled.is_empty());
        // The agent's next request settles it too, and a hanging answer sets nothing working.
        scheduler.model(false, true).await;
        tokio::time::timeout(Duration::from_secs(5), scheduler.product("after_hang"))
            .await
            .expect("a hanging answer leaves the agent waiting on the model");
        scheduler.stop();
    }

    /// An agent that never settles holds nothing for ever: at the ceiling the next step goes and
    /// the record says what the agent was still doing. A title request passes at once.
    #[tokio::test]
    async fn an_agent_that_does_not_settle_is_passed_at_the_ceiling_and_recorded() {
        let scheduler = settling(Duration::from_millis(100));
        tokio::time::timeout(Duration::from_secs(1), scheduler.model(true, false))
            .await
            .expect("a title request is not held");
        scheduler.model(false, false).await;
        tokio::time::timeout(Duration::from_secs(5), scheduler.product("next"))
            .await
            .expect("the ceiling lets the next step go");
        let unsettled = scheduler.record().unsettled;
        assert_eq!(unsettled.len(), 1, "{unsettled:?}");
        assert!(
            unsettled[0].contains("(it was working on model answer 1) when product next went"),
            "{}",
            unsettled[0]
        );
        scheduler.stop();
    }

    /// A product that subscribes once its prompt was accepted: the agent still answers its
    /// `GET /event` when it asks the model. The answer does not go before the agent answered
    /// (however long that takes): then the response and the answer are held together, and by
    /// default the product has its stream first.
    #[tokio::test]
    async fn a_model_answer_waits_while_the_agent_answers_a_request() {
        let scheduler = settling(Duration::from_secs(60));
        let exchange = scheduler.request("GET", "/event", "/event").await;
        let answering = scheduler
            .answering("GET", "/event")
            .expect("a request it answers");
        let order = Arc::new(Mutex::new(Vec::new()));
        let model = model_answer(&scheduler, &order);
        until_held(&scheduler, 1).await;
        tokio::time::sleep(QUIET * 10).await;
        assert_eq!(scheduler.held_labels(), ["model answer 1"]);
        drop(answering);
        let response = tokio::spawn({
            let (s, order) = (scheduler.clone(), order.clone());
            async move {
                s.response(&exchange).await;
                order.lock().unwrap().push("response");
            }
        });
        model.await.unwrap();
        response.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["response", "model"]);
        let record = scheduler.record();
        assert_eq!(record.decisions.len(), 1, "{record:?}");
        assert!(record.unsettled.is_empty(), "{:?}", record.unsettled);
        scheduler.stop();
    }

    /// Requests OpenCode answers once the turn ended leave the agent waiting on the model, and
    /// without the agent's progress as a dimension nothing waits on the agent's answers.
    #[tokio::test]
    async fn only_answers_that_do_not_wait_on_the_turn_hold_the_agent_unsettled() {
        let settling = settling(Duration::from_secs(60));
        assert!(settling.answering("GET", "/event").is_some());
        assert!(
            settling
                .answering("POST", "/session/{sessionID}/prompt_async")
                .is_some()
        );
        for turn in [
            "/session/{sessionID}/message",
            "/session/{sessionID}/command",
        ] {
            assert!(settling.answering("POST", turn).is_none(), "{turn}");
        }
        settling.stop();
        let plan = Plan::Replay(Schedule::default());
        let product_only = Scheduler::start(plan.strategy(), QUIET, Focus::all());
        assert!(product_only.answering("GET", "/event").is_none());
        product_only.stop();
    }

    /// An answer that never comes holds nothing for ever: at the ceiling the held step goes, the
    /// record says what the agent was still answering, and the next step waits only for quiet.
    #[tokio::test]
    async fn an_answer_that_never_comes_is_passed_at_the_ceiling_and_recorded() {
        let scheduler = settling(Duration::from_millis(100));
        let _answering = scheduler
            .answering("GET", "/event")
            .expect("answered at once");
        tokio::time::timeout(Duration::from_secs(5), scheduler.product("next"))
            .await
            .expect("the ceiling lets the step go");
        let unsettled = scheduler.record().unsettled;
        assert_eq!(unsettled.len(), 1, "{unsettled:?}");
        assert!(
            unsettled[0].contains("(it was answering GET /event) when product next went"),
            "{}",
            unsettled[0]
        );
        let quiet_only = Instant::now();
        tokio::time::timeout(Duration::from_secs(5), scheduler.product("after"))
            .await
            .expect("the next step goes");
        assert!(quiet_only.elapsed() < Duration::from_millis(100));
        assert_eq!(scheduler.record().unsettled.len(), 1);
        scheduler.stop();
    }

    /// Without `model` among the decision points the agent's progress is no dimension: model
    /// answers pass at once and nothing waits for the agent to settle.
    #[tokio::test]
    async fn a_focus_without_the_model_keeps_the_agent_out_of_the_schedule() {
        let focus = Focus::only(|point| matches!(point, Point::Product(_)));
        let plan = Plan::Replay(Schedule::default());
        let scheduler =
            Scheduler::start_settling(plan.strategy(), QUIET, focus, Duration::from_secs(60));
        tokio::time::timeout(Duration::from_secs(1), scheduler.model(false, false))
            .await
            .expect("not held");
        tokio::time::timeout(Duration::from_secs(1), scheduler.product("p"))
            .await
            .expect("nothing waits on the agent");
        scheduler.stop();
    }
}
