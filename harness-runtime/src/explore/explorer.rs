//! The search: which schedules an exploring scenario runs, when it stops, how a failing
//! schedule is shrunk and confirmed. Pure logic over a `run` callback, so it is tested here on
//! simulated systems; the runner supplies real runs of the scenario body.

use std::collections::HashSet;
use std::time::Duration;

use super::{Plan, RunRecord, Schedule, fnv1a64};

/// At most this many runs go into shrinking a failing schedule.
const MAX_SHRINK_RUNS: u32 = 16;

/// What an exploration may spend.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Schedules to search (runs of the body; shrinking and confirming come on top).
    pub(crate) runs: u32,
    /// Wall clock for everything.
    pub(crate) within: Duration,
    /// How many times a failing schedule, once shrunk, is replayed to say how reliably it fails.
    pub(crate) confirm: u32,
}

/// How the space was searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Every ordering, depth first: the space was small enough for the budget.
    Exhaustive,
    /// Seeded PCT runs: the space is larger than the budget.
    Random,
}

impl Mode {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Mode::Exhaustive => "exhaustive",
            Mode::Random => "random",
        }
    }
}

/// Why a run happens, for progress lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The `n`th schedule of the search.
    Search(u32),
    /// A candidate while shrinking.
    Shrink,
    /// A replay of the final schedule.
    Confirm,
}

/// One run's outcome.
#[derive(Clone, Debug, Default)]
pub(crate) struct RunResult {
    /// Why it failed, when it did.
    pub(crate) failure: Option<String>,
    pub(crate) record: RunRecord,
}

/// A failing schedule, shrunk and confirmed.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// The number of the search's schedule that failed.
    pub(crate) at: u32,
    /// That schedule, as found.
    pub(crate) first: Schedule,
    /// The simplest schedule that still failed.
    pub(crate) schedule: Schedule,
    /// The run of `schedule` that failed: its failure and record.
    pub(crate) run: RunResult,
    pub(crate) shrink_runs: u32,
    /// How many of the confirming replays failed, of how many ran.
    pub(crate) reproduced: u32,
    pub(crate) replays: u32,
}

/// What an exploration did.
#[derive(Clone, Debug)]
pub(crate) struct Exploration {
    pub(crate) mode: Mode,
    pub(crate) seed: u64,
    /// Bodies run in all: search, shrinking, confirmation.
    pub(crate) runs: u32,
    /// Schedules of the search, up to the first failing one.
    pub(crate) schedules: u32,
    /// The whole space was tried (exhaustive mode only).
    pub(crate) exhausted: bool,
    /// The wall-clock budget ended the search.
    pub(crate) out_of_time: bool,
    /// About how many orderings the space has: the product of how many steps were held at each
    /// decision of the FIFO run (Knuth's estimate of a tree's size from one path; a rough one,
    /// as the path is not a random one).
    pub(crate) estimated: u64,
    pub(crate) found: Option<Found>,
    /// The last search run (all passed), for the report.
    pub(crate) last: RunResult,
}

impl Exploration {
    /// One line on what was searched: `all 24 orderings tried`, `200 schedules tried (random
    /// search, seed 7; the space is larger)`.
    /// How it searched, for a failure message: `exhaustive search`, `random search of about
    /// 1.2e5 orderings`.
    pub(crate) fn searched(&self) -> String {
        match self.mode {
            Mode::Exhaustive => "exhaustive search".to_owned(),
            Mode::Random => format!(
                "random search of about {} orderings",
                orderings(self.estimated)
            ),
        }
    }

    pub(crate) fn summary(&self) -> String {
        let runs = self.schedules;
        let plural = if runs == 1 { "" } else { "s" };
        match (self.mode, self.exhausted) {
            (Mode::Exhaustive, true) if runs == 1 => {
                "the only ordering tried (never more than one step was held)".into()
            }
            (Mode::Exhaustive, true) => format!("all {runs} orderings tried"),
            (Mode::Exhaustive, false) => {
                format!("{runs} ordering{plural} tried (exhaustive search, stopped by its budget)")
            }
            (Mode::Random, _) => format!(
                "{runs} schedule{plural} tried (random search, seed {}; of about {} orderings)",
                self.seed,
                orderings(self.estimated)
            ),
        }
    }
}

/// What an exploration says as it goes, for progress lines.
pub(crate) enum Progress<'a> {
    /// Every search run so far passed; another one starts.
    Searching(&'a Exploration),
    /// Shrinking the failing schedule ended at `schedule` after `runs` runs; up to `confirm`
    /// replays of it follow.
    Shrunk {
        schedule: &'a Schedule,
        runs: u32,
        confirm: u32,
    },
}

/// `24`, `1.2e9`, or `more than 1e19` for a count that saturated.
pub(crate) fn orderings(n: u64) -> String {
    match n {
        u64::MAX => "more than 1e19".to_owned(),
        n if n < 100_000 => n.to_string(),
        n => format!("{:.1e}", n as f64),
    }
}

/// A run's divergence from the schedule it replayed: where the strategy found no fit, or a
/// deviation the run never got to.
pub(crate) fn replay_divergence(record: &RunRecord) -> Option<String> {
    record.divergence.clone()
}

/// The seed of run `run` of a search seeded `seed`.
pub(crate) fn run_seed(seed: u64, run: u32) -> u64 {
    fnv1a64(format!("{seed}:{run}").as_bytes())
}

/// A scenario's own seed under the base seed `base`: scenarios do not explore in lockstep.
pub(crate) fn scenario_seed(base: u64, scenario: &str) -> u64 {
    fnv1a64(format!("{base}:{scenario}").as_bytes())
}

/// Explores: the FIFO schedule first, then the whole space depth first when the FIFO run's
/// decisions say it fits the budget, else seeded PCT runs; stops at the first failure, which is
/// shrunk and confirmed. `elapsed` is the wall clock since the exploration began.
pub(crate) fn explore(
    budget: Budget,
    seed: u64,
    elapsed: &dyn Fn() -> Duration,
    run: &mut dyn FnMut(&Plan, Purpose) -> RunResult,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Exploration {
    let mut exploration = Exploration {
        mode: Mode::Exhaustive,
        seed,
        runs: 0,
        schedules: 0,
        exhausted: false,
        out_of_time: false,
        estimated: 1,
        found: None,
        last: RunResult::default(),
    };
    let mut go = |plan: &Plan, purpose, exploration: &mut Exploration| {
        exploration.runs += 1;
        if let Purpose::Search(n) = purpose {
            exploration.schedules = n;
        }
        run(plan, purpose)
    };

    let first = go(
        &Plan::Replay(Schedule::default()),
        Purpose::Search(1),
        &mut exploration,
    );
    let space: u64 = first
        .record
        .path()
        .iter()
        .fold(1u64, |space, (_, of)| space.saturating_mul(*of as u64));
    exploration.estimated = space;
    exploration.mode = if space <= u64::from(budget.runs) {
        Mode::Exhaustive
    } else {
        Mode::Random
    };
    let mut longest = first.record.decisions.len() as u32;
    let fifo_passed = first.failure.is_none();
    let mut result = first;
    let mut n = 1;
    let mut path = result.record.path();
    loop {
        if result.failure.is_some() {
            break;
        }
        progress(Progress::Searching(&exploration));
        let plan = match exploration.mode {
            Mode::Exhaustive => match next_path(&path) {
                Some(prefix) => Plan::Prefix(prefix),
                None => {
                    exploration.exhausted = true;
                    break;
                }
            },
            Mode::Random => Plan::Pct {
                seed: run_seed(seed, n + 1),
                // Depths 1, 2, 3 in turn: most bugs need one or two preemptions.
                depth: 1 + (n - 1) % 3,
                length: longest.max(1),
            },
        };
        if n >= budget.runs {
            break;
        }
        if elapsed() >= budget.within {
            exploration.out_of_time = true;
            break;
        }
        n += 1;
        result = go(&plan, Purpose::Search(n), &mut exploration);
        longest = longest.max(result.record.decisions.len() as u32);
        path = result.record.path();
    }
    if result.failure.is_none() {
        exploration.last = result;
        return exploration;
    }

    let first_schedule = result.record.schedule();
    let mut shrink_runs = 0;
    let passed = if fifo_passed {
        vec![Schedule::default()]
    } else {
        Vec::new()
    };
    let (schedule, failing) = shrink(first_schedule.clone(), result, &passed, &mut |candidate| {
        if shrink_runs >= MAX_SHRINK_RUNS || elapsed() >= budget.within {
            return None;
        }
        shrink_runs += 1;
        Some(go(
            &Plan::Replay(candidate.clone()),
            Purpose::Shrink,
            &mut exploration,
        ))
    });
    let mut found = Found {
        at: n,
        first: first_schedule,
        schedule,
        run: failing,
        shrink_runs,
        reproduced: 0,
        replays: 0,
    };
    progress(Progress::Shrunk {
        schedule: &found.schedule,
        runs: shrink_runs,
        confirm: budget.confirm,
    });
    for _ in 0..budget.confirm {
        if elapsed() >= budget.within {
            break;
        }
        let replay = go(
            &Plan::Replay(found.schedule.clone()),
            Purpose::Confirm,
            &mut exploration,
        );
        found.replays += 1;
        if replay.failure.is_some() && replay_divergence(&replay.record).is_none() {
            found.reproduced += 1;
        }
    }
    exploration.found = Some(found);
    exploration
}

/// The next path of a depth-first search after `path` (chosen index, held count per decision):
/// the deepest decision with an untried alternative takes the next one, everything after it
/// the default. `None` when every alternative was tried.
fn next_path(path: &[(usize, usize)]) -> Option<Vec<usize>> {
    let mut path = path.to_vec();
    while let Some((chosen, of)) = path.pop() {
        if chosen + 1 < of {
            let mut prefix: Vec<usize> = path.iter().map(|(c, _)| *c).collect();
            prefix.push(chosen + 1);
            return Some(prefix);
        }
    }
    None
}

/// How many deviations of a failing schedule are first tried alone: most races need one, and a
/// bug that needs more costs at most this many runs more.
const ALONE_FIRST: usize = 4;

/// Shrinks a failing schedule. First, the deviations that began a delay are tried alone,
/// earliest first (at most [`ALONE_FIRST`]): once a thread's step overtook a held step, its
/// next steps overtaking the same one only follow from that (the held step stays held while
/// they go), and a race usually needs a single deviation, so this is often one or two runs
/// where halving a schedule of twenty deviations takes six. Then it drops chunks of its
/// deviations (all of them, then halves, then quarters, down to single ones, the latest first:
/// an early deviation is usually what set the race up) while the replay still fails, to a
/// fixpoint or until `run` says the budget is spent (`None`). What is kept is the schedule the failing run actually took: a
/// deviation that no longer came up (an earlier one it needed was dropped) is gone from it.
/// `passed` holds schedules known to pass (the FIFO run's): a run that failed while taking one
/// of them failed by the machine's timing, not by its schedule, and is not a simpler schedule.
/// Returns the simplest failing schedule and its failing run.
fn shrink(
    mut current: Schedule,
    mut failing: RunResult,
    passed: &[Schedule],
    run: &mut dyn FnMut(&Schedule) -> Option<RunResult>,
) -> (Schedule, RunResult) {
    let passed: HashSet<String> = passed.iter().map(Schedule::to_string).collect();
    let mut tried = passed.clone();
    tried.insert(current.to_string());
    // A failing run whose schedule is simpler than the current one, and not one seen passing.
    let simpler = |result: &RunResult, current: &Schedule| {
        let taken = result.record.schedule();
        (result.failure.is_some()
            && taken.len() < current.len()
            && !passed.contains(&taken.to_string()))
        .then_some(taken)
    };
    if current.len() > 1 {
        for alone in delay_starts(&current).into_iter().take(ALONE_FIRST) {
            let candidate = Schedule::new(vec![alone]);
            if !tried.insert(candidate.to_string()) {
                continue;
            }
            let Some(result) = run(&candidate) else {
                return (current, failing);
            };
            if let Some(taken) = simpler(&result, &current) {
                tried.insert(taken.to_string());
                current = taken;
                failing = result;
                break;
            }
        }
    }
    'simpler: loop {
        let len = current.len();
        let mut size = len;
        while size >= 1 {
            let mut end = len;
            while end > 0 {
                let start = end.saturating_sub(size);
                let candidate = current.without(start..end);
                end = start;
                if !tried.insert(candidate.to_string()) {
                    continue;
                }
                let Some(result) = run(&candidate) else {
                    break 'simpler;
                };
                // Deviations that no longer came up did not matter: what the failing run
                // actually did is the simpler schedule.
                if let Some(taken) = simpler(&result, &current) {
                    tried.insert(taken.to_string());
                    current = taken;
                    failing = result;
                    continue 'simpler;
                }
            }
            size /= 2;
        }
        break;
    }
    (current, failing)
}

/// The deviations of `schedule` that began a delay, in order: each that is the first of its
/// step's thread to overtake that step (a thread's later steps overtaking the step still held
/// follow from its first going ahead).
fn delay_starts(schedule: &Schedule) -> Vec<super::schedule::Choice> {
    let mut seen = HashSet::new();
    schedule
        .choices()
        .iter()
        .filter(|choice| seen.insert((choice.first.tag, choice.over)))
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::Step;
    use super::super::step::StepKind;
    use super::super::trace::{Decision, Released};
    use super::*;

    /// A simulated system: threads of steps; a thread's next step is held once its previous one
    /// went; the held steps are ordered by when they became held.
    struct Sim {
        threads: Vec<Vec<&'static str>>,
    }

    impl Sim {
        fn step(&self, thread: usize, index: usize) -> Step {
            Step {
                kind: StepKind::Product,
                label: self.threads[thread][index].to_owned(),
                thread: format!("thread {thread}"),
                seq: index as u32 + 1,
            }
        }

        /// Runs `plan`; returns the order the steps went in and the record.
        fn run(&self, plan: &Plan) -> (Vec<&'static str>, RunRecord) {
            let mut strategy = plan.strategy();
            let mut next = vec![0; self.threads.len()];
            // (thread, arrival) of the held steps, oldest first.
            let mut held: Vec<usize> = (0..self.threads.len())
                .filter(|&t| !self.threads[t].is_empty())
                .collect();
            let mut order = Vec::new();
            let mut record = RunRecord::default();
            while !held.is_empty() {
                let steps: Vec<Step> = held.iter().map(|&t| self.step(t, next[t])).collect();
                let index = if held.len() == 1 {
                    0
                } else {
                    let n = record.decisions.len() as u32 + 1;
                    let refs: Vec<&Step> = steps.iter().collect();
                    let i = strategy.choose(n, &refs);
                    record.decisions.push(Decision {
                        n,
                        held: steps.clone(),
                        chosen: i,
                    });
                    i
                };
                let thread = held.remove(index);
                order.push(self.threads[thread][next[thread]]);
                record.released.push(Released {
                    step: steps[index].clone(),
                    decision: None,
                    deviated: index != 0,
                    held_with: Vec::new(),
                });
                next[thread] += 1;
                if next[thread] < self.threads[thread].len() {
                    held.push(thread);
                }
            }
            if record.divergence.is_none() {
                record.divergence = strategy.unfinished(record.decisions.len() as u32);
            }
            (order, record)
        }

        fn explore(
            &self,
            budget: u32,
            seed: u64,
            fails: impl Fn(&[&str]) -> bool,
        ) -> (Exploration, Vec<Plan>) {
            let mut plans = Vec::new();
            let exploration = explore(
                Budget {
                    runs: budget,
                    within: Duration::from_secs(3600),
                    confirm: 2,
                },
                seed,
                &|| Duration::ZERO,
                &mut |plan, _| {
                    plans.push(plan.clone());
                    let (order, record) = self.run(plan);
                    RunResult {
                        failure: fails(&order).then(|| format!("failed: {order:?}")),
                        record,
                    }
                },
                &mut |_| {},
            );
            (exploration, plans)
        }
    }

    fn binomial(n: u64, k: u64) -> u64 {
        (1..=k).fold(1, |acc, i| acc * (n + 1 - i) / i)
    }

    #[test]
    fn exhaustive_search_counts_every_interleaving_once() {
        let cases: [&[usize]; 5] = [&[1, 1], &[2, 2], &[3, 2], &[1, 1, 1], &[2, 1, 1]];
        for lengths in cases {
            const NAMES: [[&str; 3]; 3] =
                [["a1", "a2", "a3"], ["b1", "b2", "b3"], ["c1", "c2", "c3"]];
            let threads: Vec<Vec<&str>> = lengths
                .iter()
                .enumerate()
                .map(|(t, &len)| NAMES[t][..len].to_vec())
                .collect();
            let sim = Sim { threads };
            let total: u64 = lengths.iter().sum::<usize>() as u64;
            // The multinomial coefficient: interleavings of sequences of these lengths.
            let mut expected = 1;
            let mut left = total;
            for &len in lengths {
                expected *= binomial(left, len as u64);
                left -= len as u64;
            }
            let (exploration, plans) = sim.explore(1000, 1, |_| false);
            assert_eq!(exploration.mode, Mode::Exhaustive, "{lengths:?}");
            assert!(exploration.exhausted, "{lengths:?}");
            assert_eq!(u64::from(exploration.schedules), expected, "{lengths:?}");
            let orders: HashSet<Vec<&str>> = plans.iter().map(|p| sim.run(p).0).collect();
            assert_eq!(
                orders.len() as u64,
                expected,
                "each ordering once: {lengths:?}"
            );
            assert_eq!(
                exploration.summary(),
                format!("all {expected} orderings tried")
            );
        }
    }

    #[test]
    fn a_space_larger_than_the_budget_is_searched_at_random_and_the_seed_repeats_it() {
        let sim = Sim {
            threads: vec![
                vec!["a1", "a2", "a3", "a4"],
                vec!["b1", "b2", "b3", "b4"],
                vec!["c1", "c2", "c3", "c4"],
            ],
        };
        let (exploration, plans) = sim.explore(20, 42, |_| false);
        assert_eq!(exploration.mode, Mode::Random);
        assert_eq!(exploration.schedules, 20);
        assert!(!exploration.exhausted);
        assert!(exploration.summary().contains("random search, seed 42"));
        // FIFO holds all three threads' next steps at ten decisions, two at one more; the true
        // count is 12! / 4!^3 = 34650.
        assert_eq!(exploration.estimated, 2 * 3u64.pow(10));
        assert!(
            exploration.summary().ends_with("of about 1.2e5 orderings)"),
            "{}",
            exploration.summary()
        );
        assert_eq!(orderings(123_456_789), "1.2e8");
        assert_eq!(orderings(u64::MAX), "more than 1e19");
        let (_, again) = sim.explore(20, 42, |_| false);
        assert_eq!(plans, again, "the same seed gives the same schedules");
        let (_, other) = sim.explore(20, 43, |_| false);
        assert_ne!(plans, other);
        let orders: HashSet<Vec<&str>> = plans.iter().map(|p| sim.run(p).0).collect();
        assert!(
            orders.len() > 10,
            "random search repeats itself: {}",
            orders.len()
        );
    }

    /// Three threads of four steps each.
    fn three_threads() -> Sim {
        Sim {
            threads: vec![
                vec!["a1", "a2", "a3", "a4"],
                vec!["b1", "b2", "b3", "b4"],
                vec!["c1", "c2", "c3", "c4"],
            ],
        }
    }

    /// The failure of [`three_threads`] that needs one deviation: c1 before b1 (at decision 2,
    /// a1 going first by default and then b1 and c1 held; or at decision 1, c1 over a1, then b1
    /// over a2 by default).
    fn c1_before_b1(order: &[&str]) -> bool {
        let at = |s| order.iter().position(|o| *o == s).unwrap();
        at("c1") < at("b1")
    }

    #[test]
    fn shrinking_reaches_the_one_deviation_the_failure_needs() {
        let sim = three_threads();
        let fails = c1_before_b1;
        let mut found_any = 0;
        for seed in 0..20 {
            let (exploration, _) = sim.explore(50, seed, fails);
            let found = exploration.found.expect("the bug is found");
            found_any += 1;
            assert_eq!(found.schedule.len(), 1, "seed {seed}: {}", found.schedule);
            assert!(found.first.len() >= found.schedule.len());
            assert_eq!((found.reproduced, found.replays), (2, 2));
            // The shrunk schedule replays to the failure.
            let (order, _) = sim.run(&Plan::Replay(found.schedule.clone()));
            assert!(fails(&order), "seed {seed}: {order:?}");
        }
        assert_eq!(found_any, 20);
    }

    /// A loaded machine: the first run while shrinking fails in the default order (its
    /// deviation never came up: the agent ran ahead by timing), though the default order passed
    /// as the search's first run. That run is not a simpler schedule: shrinking keeps the
    /// deviation the failure needs, and never ends at `fifo`, whose line would reproduce the
    /// failure only by chance.
    #[test]
    fn a_shrink_run_failing_in_an_order_seen_passing_is_timing_not_a_simpler_schedule() {
        let sim = three_threads();
        let fails = c1_before_b1;
        for seed in 0..20 {
            let mut shrink_runs = 0;
            let exploration = explore(
                Budget {
                    runs: 50,
                    within: Duration::from_secs(3600),
                    confirm: 0,
                },
                seed,
                &|| Duration::ZERO,
                &mut |plan, purpose| {
                    if matches!(purpose, Purpose::Shrink) {
                        shrink_runs += 1;
                        if shrink_runs == 1 {
                            let (order, record) = sim.run(&Plan::Replay(Schedule::default()));
                            return RunResult {
                                failure: Some(format!("by timing: {order:?}")),
                                record,
                            };
                        }
                    }
                    let (order, record) = sim.run(plan);
                    RunResult {
                        failure: fails(&order).then(|| format!("{order:?}")),
                        record,
                    }
                },
                &mut |_| {},
            );
            let found = exploration.found.expect("the bug is found");
            // The timing run's candidate counts as tried: its deviation may stay beside the one
            // needed, but the schedule still decides the failure.
            assert!(!found.schedule.is_fifo(), "seed {seed}: fifo");
            assert!(fails(&sim.run(&Plan::Replay(found.schedule.clone())).0));
        }
    }

    #[test]
    fn shrinking_keeps_the_three_deviations_a_deeper_failure_needs() {
        let sim = Sim {
            threads: vec![vec!["a1", "a2", "a3"], vec!["b1", "b2", "b3"]],
        };
        // Only b1 a1 a2 b2 b3 a3 fails: three deviations from FIFO's a1 b1 a2 b2 a3 b3 (b1 over
        // a1, a2 over b2, b3 over a3).
        let fails = |order: &[&str]| {
            let at = |s| order.iter().position(|o| *o == s).unwrap();
            at("b1") < at("a1") && at("b3") < at("a3") && at("a2") < at("b2")
        };
        let (exploration, _) = sim.explore(100, 3, fails);
        assert_eq!(exploration.mode, Mode::Exhaustive);
        let found = exploration.found.expect("found");
        assert_eq!(found.schedule.len(), 3, "{}", found.schedule);
        assert!(fails(&sim.run(&Plan::Replay(found.schedule)).0));
    }

    /// The shape of the stop-at-reply race's searches: an event stream of many steps, a product
    /// and an agent thread; the failure needs the product's step before the agent's, and random
    /// schedules that find it carry a dozen more deviations (the stream's steps overtaking
    /// whichever step was delayed). Trying the deviations that began a delay alone first shrinks
    /// it in 1.4 runs on average over these seeds, where halving alone took 3.1.
    #[test]
    fn shrinking_tries_each_delay_alone_first() {
        let stream: Vec<&'static str> = vec![
            "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10", "e11", "e12",
        ];
        let sim = Sim {
            threads: vec![vec!["x1", "x2"], stream, vec!["p1", "p2"]],
        };
        let fails = |order: &[&str]| {
            let at = |s| order.iter().position(|o| *o == s).unwrap();
            at("x2") < at("p1")
        };
        let (mut found, mut runs, mut longest) = (0, 0, 0);
        for seed in 0..40 {
            let (exploration, plans) = sim.explore(40, seed, fails);
            let Some(f) = exploration.found else {
                continue;
            };
            found += 1;
            assert_eq!(
                f.schedule.len(),
                1,
                "seed {seed}: {} from {}",
                f.schedule,
                f.first
            );
            assert!(fails(&sim.run(&Plan::Replay(f.schedule.clone())).0));
            // Every shrinking run replays a schedule no earlier run of the search replayed.
            let replayed: Vec<String> = plans
                .iter()
                .filter_map(|p| match p {
                    Plan::Replay(s) => Some(s.to_string()),
                    _ => None,
                })
                .collect();
            let mut unique = replayed.clone();
            unique.sort();
            unique.dedup();
            assert!(
                unique.len() + 2 >= replayed.len(),
                "seed {seed}: {replayed:?}"
            );
            runs += f.shrink_runs;
            longest = longest.max(f.first.len());
        }
        assert!(found >= 20, "found in {found} of 40 seeds");
        assert!(longest >= 6, "the searches' schedules are long: {longest}");
        assert!(
            f64::from(runs) / f64::from(found) <= 2.0,
            "{runs} shrinking runs for {found} finds"
        );
    }

    /// The shape of the lost ask's searches: the event stream's steps overtake a held step, and
    /// then the step that matters (the model's answer) overtakes it too. Each thread's first
    /// deviation over the held step is tried alone, not only the stream's: 1.25 runs a find over
    /// these seeds, 1.75 trying only the first deviation over each held step, 2.6 halving alone.
    #[test]
    fn shrinking_tries_each_thread_that_overtook_a_held_step() {
        let sim = Sim {
            threads: vec![
                vec!["h1", "h2"],
                vec!["e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"],
                vec!["m1"],
            ],
        };
        let fails = |order: &[&str]| {
            let at = |s| order.iter().position(|o| *o == s).unwrap();
            at("m1") < at("h1")
        };
        let (mut found, mut runs) = (0, 0);
        for seed in 0..40 {
            let (exploration, _) = sim.explore(40, seed, fails);
            let Some(f) = exploration.found else {
                continue;
            };
            found += 1;
            assert_eq!(
                f.schedule.to_string().matches('>').count(),
                1,
                "seed {seed}"
            );
            assert!(fails(&sim.run(&Plan::Replay(f.schedule.clone())).0));
            runs += f.shrink_runs;
        }
        assert!(found >= 20, "found in {found} of 40 seeds");
        assert!(
            f64::from(runs) / f64::from(found) <= 1.5,
            "{runs} shrinking runs for {found} finds"
        );
    }

    /// The shrunk schedule is said once, when shrinking ends: before the confirming replays,
    /// which take as long as the runs did.
    #[test]
    fn the_shrunk_schedule_is_said_before_it_is_confirmed() {
        let sim = three_threads();
        let confirms = std::cell::Cell::new(0);
        let mut said = Vec::new();
        let exploration = explore(
            Budget {
                runs: 50,
                within: Duration::from_secs(3600),
                confirm: 2,
            },
            1,
            &|| Duration::ZERO,
            &mut |plan, purpose| {
                if purpose == Purpose::Confirm {
                    confirms.set(confirms.get() + 1);
                }
                let (order, record) = sim.run(plan);
                RunResult {
                    failure: c1_before_b1(&order).then(|| format!("{order:?}")),
                    record,
                }
            },
            &mut |event| {
                if let Progress::Shrunk {
                    schedule,
                    runs,
                    confirm,
                } = event
                {
                    said.push((schedule.to_string(), runs, confirm, confirms.get()));
                }
            },
        );
        let found = exploration.found.expect("the bug is found");
        assert_eq!(found.replays, 2);
        assert_eq!(
            said,
            [(found.schedule.to_string(), found.shrink_runs, 2, 0)]
        );
    }

    #[test]
    fn a_replay_whose_deviation_never_comes_up_diverged() {
        let sim = Sim {
            threads: vec![vec!["a1"], vec!["b1"]],
        };
        let (_, record) = sim.run(&Plan::Replay(Schedule::parse("abcd.1>0123.1").unwrap()));
        assert_eq!(
            replay_divergence(&record).unwrap(),
            "its deviation abcd.1>0123.1 never came up: the run (1 decision) never held step \
             abcd.1 and step 0123.1 together"
        );
        let (_, record) = sim.run(&Plan::Replay(Schedule::default()));
        assert_eq!(replay_divergence(&record), None);
    }

    #[test]
    fn a_failure_in_the_first_run_is_reported_as_fifo() {
        let sim = Sim {
            threads: vec![vec!["a1"], vec!["b1"]],
        };
        let (exploration, _) = sim.explore(10, 1, |_| true);
        let found = exploration.found.unwrap();
        assert_eq!((found.at, found.schedule.to_string()), (1, "fifo".into()));
        assert_eq!(found.shrink_runs, 0);
    }

    #[test]
    fn seeds_differ_per_scenario_and_per_run() {
        assert_ne!(scenario_seed(1, "a::x"), scenario_seed(1, "a::y"));
        assert_ne!(run_seed(5, 2), run_seed(5, 3));
        assert_eq!(scenario_seed(1, "a::x"), scenario_seed(1, "a::x"));
    }
}
