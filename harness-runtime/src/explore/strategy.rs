//! How a run chooses at its decisions: replaying a schedule, forcing the first choices of an
//! exhaustive search, or PCT's randomized priorities.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Schedule, Step};

/// What one exploring run is told to do at its decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Make the schedule's deviations (whenever the two steps of one are held together, its
    /// first goes), take the oldest held step everywhere else.
    Replay(Schedule),
    /// Take the `i`th held step (canonical order) at decision `i + 1`, the oldest after the
    /// prefix: one path of the exhaustive search.
    Prefix(Vec<usize>),
    /// Probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010): random priorities per
    /// thread, `depth - 1` priority change points among the first `length` decisions.
    Pct { seed: u64, depth: u32, length: u32 },
}

impl Plan {
    /// The strategy that carries it out in one run.
    pub(crate) fn strategy(&self) -> Box<dyn Strategy> {
        match self {
            Plan::Replay(schedule) => Box::new(Replay {
                applied: vec![false; schedule.len()],
                schedule: schedule.clone(),
            }),
            Plan::Prefix(prefix) => Box::new(Prefix {
                prefix: prefix.clone(),
            }),
            Plan::Pct {
                seed,
                depth,
                length,
            } => Box::new(Pct::new(*seed, *depth, *length)),
        }
    }
}

/// Chooses at decisions. One per run.
pub(crate) trait Strategy: Send {
    /// The index of the one of `held` (two or more, oldest first) that goes at decision `n`
    /// (1-based).
    fn choose(&mut self, n: u32, held: &[&Step]) -> usize;

    /// At the run's end, after `decisions` decisions: why the plan was not carried out whole,
    /// if it was not.
    fn unfinished(&self, _decisions: u32) -> Option<String> {
        None
    }
}

struct Replay {
    schedule: Schedule,
    /// Which deviations were made.
    applied: Vec<bool>,
}

impl Strategy for Replay {
    fn choose(&mut self, _n: u32, held: &[&Step]) -> usize {
        let position = |id| held.iter().position(|step| step.id() == id);
        for (choice, applied) in self.schedule.choices().iter().zip(&mut self.applied) {
            if *applied {
                continue;
            }
            if let (Some(first), Some(_)) = (position(choice.first), position(choice.over)) {
                *applied = true;
                return first;
            }
        }
        0
    }

    fn unfinished(&self, decisions: u32) -> Option<String> {
        let (choice, _) = self
            .schedule
            .choices()
            .iter()
            .zip(&self.applied)
            .find(|(_, applied)| !**applied)?;
        Some(format!(
            "its deviation {choice} never came up: the run ({decisions} decision{}) never held \
             step {} and step {} together",
            if decisions == 1 { "" } else { "s" },
            choice.first,
            choice.over
        ))
    }
}

struct Prefix {
    prefix: Vec<usize>,
}

impl Strategy for Prefix {
    fn choose(&mut self, n: u32, held: &[&Step]) -> usize {
        let index = self.prefix.get(n as usize - 1).copied().unwrap_or(0);
        // A run that holds fewer steps than the path it follows (the agent timed things
        // differently) takes the last one; the search sees what was chosen in the run's record.
        index.min(held.len() - 1)
    }
}

/// PCT over threads (an HTTP exchange, an event stream, a product point pass): every thread gets
/// a random priority when first held, the highest-priority held thread goes, and at each change
/// point the thread about to go drops below every other first. Few change points: few
/// preemptions, so shallow orderings bugs are found first.
struct Pct {
    rng: ChaCha8Rng,
    priorities: HashMap<String, i64>,
    change_points: Vec<u32>,
    /// The priority the next demoted thread gets: below every initial one and every earlier
    /// demotion.
    next_low: i64,
}

impl Pct {
    fn new(seed: u64, depth: u32, length: u32) -> Pct {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let length = length.max(1);
        let mut change_points = Vec::new();
        for _ in 1..depth.max(1) {
            change_points.push(rng.random_range(1..=length));
        }
        Pct {
            rng,
            priorities: HashMap::new(),
            change_points,
            next_low: -1,
        }
    }

    fn highest(&mut self, held: &[&Step]) -> usize {
        let mut best = (0, i64::MIN);
        for (index, step) in held.iter().enumerate() {
            let priority = match self.priorities.get(&step.thread) {
                Some(priority) => *priority,
                None => {
                    let priority = self.rng.random_range(0..1_000_000_000);
                    self.priorities.insert(step.thread.clone(), priority);
                    priority
                }
            };
            if priority > best.1 {
                best = (index, priority);
            }
        }
        best.0
    }
}

impl Strategy for Pct {
    fn choose(&mut self, n: u32, held: &[&Step]) -> usize {
        let mut index = self.highest(held);
        let changes = self
            .change_points
            .iter()
            .filter(|&&point| point == n)
            .count();
        for _ in 0..changes {
            self.priorities
                .insert(held[index].thread.clone(), self.next_low);
            self.next_low -= 1;
            index = self.highest(held);
        }
        index
    }
}

/// `a, b, c` of the steps' labels.
pub(crate) fn labels(held: &[&Step]) -> String {
    held.iter()
        .map(|step| step.label.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps() -> Vec<Step> {
        vec![
            Step::request("POST", "/session/{sessionID}/abort", 1),
            Step::event(1, 4, "session.idle"),
            Step::product("before_reply", 1),
        ]
    }

    fn schedule(first: &Step, over: &Step) -> Schedule {
        Schedule::parse(&format!("{}>{}", first.id(), over.id())).unwrap()
    }

    #[test]
    fn a_replay_makes_its_deviation_when_its_two_steps_meet_whatever_the_decision() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let product_over_abort = schedule(&steps[2], &steps[0]);
        let mut replay = Plan::Replay(product_over_abort.clone()).strategy();
        // Not while only one of them is held; then once.
        assert_eq!(replay.choose(1, &held[..2]), 0);
        assert_eq!(replay.choose(2, &held[1..]), 0);
        assert_eq!(replay.choose(5, &held), 2);
        assert_eq!(replay.choose(6, &held), 0, "made once");
        assert_eq!(replay.unfinished(6), None);
        let mut never = Plan::Replay(product_over_abort).strategy();
        assert_eq!(never.choose(1, &held[..2]), 0);
        let unfinished = never.unfinished(1).unwrap();
        assert!(
            unfinished.starts_with(&format!(
                "its deviation {}>{} never came up: the run (1 decision) never held step",
                steps[2].id(),
                steps[0].id()
            )),
            "{unfinished}"
        );
        // Another event of the same stream is another step.
        let later_event = Step::event(1, 5, "session.idle");
        let mut other = Plan::Replay(schedule(&later_event, &steps[0])).strategy();
        assert_eq!(other.choose(1, &held), 0);
    }

    #[test]
    fn the_same_seed_makes_the_same_choices_and_another_seed_others() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let choices = |seed: u64| -> Vec<usize> {
            let mut pct = Plan::Pct {
                seed,
                depth: 3,
                length: 6,
            }
            .strategy();
            (1..=6).map(|n| pct.choose(n, &held)).collect()
        };
        assert_eq!(choices(7), choices(7));
        let distinct: std::collections::HashSet<_> = (0..32).map(choices).collect();
        assert!(distinct.len() > 3, "seeds barely matter: {distinct:?}");
    }

    #[test]
    fn a_change_point_demotes_the_thread_about_to_go() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        for seed in 0..16 {
            let mut plain = Pct::new(seed, 1, 1);
            let mut demoting = Pct::new(seed, 1, 1);
            demoting.change_points = vec![1];
            let top = plain.choose(1, &held);
            let preempted = demoting.choose(1, &held);
            assert_ne!(
                top, preempted,
                "seed {seed}: the change point changed nothing"
            );
            // The demoted thread stays below the others afterwards.
            assert_eq!(demoting.choose(2, &held), preempted);
            assert_eq!(plain.choose(2, &held), top);
        }
    }

    #[test]
    fn a_prefix_forces_its_choices_then_takes_the_oldest() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let mut prefix = Plan::Prefix(vec![2, 1]).strategy();
        assert_eq!(prefix.choose(1, &held), 2);
        assert_eq!(prefix.choose(2, &held[..2]), 1);
        assert_eq!(prefix.choose(3, &held), 0);
        let mut short = Plan::Prefix(vec![5]).strategy();
        assert_eq!(short.choose(1, &held), 2);
    }
}
