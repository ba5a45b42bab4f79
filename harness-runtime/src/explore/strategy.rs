//! How a run chooses at its decisions: replaying a schedule, forcing the first choices of an
//! exhaustive search, or PCT's randomized priorities.

use std::collections::HashMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{Schedule, Step};

/// What one exploring run is told to do at its decisions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Plan {
    /// Deviate where the schedule says, take the oldest held step everywhere else; a deviation
    /// that no longer fits ends the scheduling (the run goes on unscheduled).
    Replay(Schedule),
    /// Like `Replay`, but a deviation that does not fit is skipped and the run stays scheduled:
    /// shrinking tries candidates this way and keeps the schedule the run actually took.
    Lenient(Schedule),
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
                schedule: schedule.clone(),
                next: 0,
                lenient: false,
            }),
            Plan::Lenient(schedule) => Box::new(Replay {
                schedule: schedule.clone(),
                next: 0,
                lenient: true,
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

/// A choice at a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Chosen {
    /// Release the held step at this index (canonical order).
    Index(usize),
    /// The plan no longer fits what is held (the code changed): why, naming the decision. The
    /// run goes on unscheduled.
    Diverged(String),
}

/// Chooses at decisions. One per run.
pub(crate) trait Strategy: Send {
    /// Which of `held` (two or more, oldest first) goes at decision `n` (1-based).
    fn choose(&mut self, n: u32, held: &[&Step]) -> Chosen;

    /// At the run's end, after `decisions` decisions: why the plan was not carried out whole,
    /// if it was not.
    fn unfinished(&self, _decisions: u32) -> Option<String> {
        None
    }
}

/// How many decisions later than its schedule names a replayed deviation may land. Decisions are
/// the moments two steps were held together, and an agent that times things a little
/// differently adds one (a response and an event that arrived together in this run, apart in
/// the recorded one): the deviation still means "this step goes first when it competes".
const DRIFT: u32 = 2;

struct Replay {
    schedule: Schedule,
    /// The schedule's next deviation to carry out.
    next: usize,
    /// Skip a deviation that does not fit instead of diverging.
    lenient: bool,
}

impl Strategy for Replay {
    fn choose(&mut self, n: u32, held: &[&Step]) -> Chosen {
        let Some(choice) = self.schedule.choices().get(self.next).copied() else {
            return Chosen::Index(0);
        };
        if n < choice.decision {
            return Chosen::Index(0);
        }
        if let Some(index) = held.iter().position(|step| step.tag() == choice.tag) {
            self.next += 1;
            return Chosen::Index(index);
        }
        if n >= choice.decision + DRIFT && self.lenient {
            self.next += 1;
            return self.choose(n, held);
        }
        if n >= choice.decision + DRIFT {
            return Chosen::Diverged(format!(
                "the schedule takes step {:04x} at decision {}, and it was not held there or \
                 within {DRIFT} decisions of it; held at decision {n}: {}",
                choice.tag,
                choice.decision,
                labels(held)
            ));
        }
        Chosen::Index(0)
    }

    fn unfinished(&self, decisions: u32) -> Option<String> {
        if self.lenient {
            return None;
        }
        let choice = self.schedule.choices().get(self.next)?;
        Some(format!(
            "the run made {decisions} decision{} and never held step {:04x}, which the schedule \
             takes at decision {}",
            if decisions == 1 { "" } else { "s" },
            choice.tag,
            choice.decision
        ))
    }
}

struct Prefix {
    prefix: Vec<usize>,
}

impl Strategy for Prefix {
    fn choose(&mut self, n: u32, held: &[&Step]) -> Chosen {
        let index = self.prefix.get(n as usize - 1).copied().unwrap_or(0);
        // A run that holds fewer steps than the path it follows (the agent timed things
        // differently) takes the last one; the search sees what was chosen in the run's record.
        Chosen::Index(index.min(held.len() - 1))
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
    fn choose(&mut self, n: u32, held: &[&Step]) -> Chosen {
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
        Chosen::Index(index)
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
            Step::event(1, "session.idle"),
            Step::product("before_reply", 1),
        ]
    }

    #[test]
    fn a_replay_takes_the_tagged_step_and_says_where_it_no_longer_fits() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let schedule = Schedule::parse(&format!("2={:04x}", steps[2].tag())).unwrap();
        let mut replay = Plan::Replay(schedule.clone()).strategy();
        // Never before its decision, even when held; then once.
        assert_eq!(replay.choose(1, &held), Chosen::Index(0));
        assert_eq!(replay.choose(2, &held), Chosen::Index(2));
        assert_eq!(
            replay.choose(3, &held),
            Chosen::Index(0),
            "carried out once"
        );
        assert_eq!(replay.unfinished(3), None);
        // Up to two decisions later than recorded (the agent added some): still carried out.
        let mut late = Plan::Replay(schedule.clone()).strategy();
        for n in 1..=3 {
            assert_eq!(late.choose(n, &held[..2]), Chosen::Index(0));
        }
        assert_eq!(late.choose(4, &held), Chosen::Index(2));
        let mut never = Plan::Replay(schedule).strategy();
        assert_eq!(never.choose(1, &held[..2]), Chosen::Index(0));
        let unfinished = never.unfinished(1).unwrap();
        assert!(
            unfinished.starts_with("the run made 1 decision and never held step"),
            "{unfinished}"
        );
        let mut stale = Plan::Replay(Schedule::parse("1=0000").unwrap()).strategy();
        assert_eq!(stale.choose(1, &held), Chosen::Index(0));
        assert_eq!(stale.choose(2, &held), Chosen::Index(0));
        let Chosen::Diverged(why) = stale.choose(3, &held) else {
            panic!("a tag nobody has must diverge past the drift")
        };
        assert!(
            why.starts_with("the schedule takes step 0000 at decision 1"),
            "{why}"
        );
        assert!(why.contains("event session.idle (stream 1)"), "{why}");
    }

    #[test]
    fn a_lenient_replay_skips_a_deviation_that_does_not_fit_and_goes_on() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let schedule = Schedule::parse(&format!("1=0000,4={:04x}", steps[2].tag())).unwrap();
        let mut lenient = Plan::Lenient(schedule).strategy();
        for n in 1..=3 {
            assert_eq!(lenient.choose(n, &held), Chosen::Index(0), "decision {n}");
        }
        assert_eq!(lenient.choose(4, &held), Chosen::Index(2));
        assert_eq!(lenient.unfinished(4), None);
    }

    #[test]
    fn the_same_seed_makes_the_same_choices_and_another_seed_others() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let choices = |seed: u64| -> Vec<Chosen> {
            let mut pct = Plan::Pct {
                seed,
                depth: 3,
                length: 6,
            }
            .strategy();
            (1..=6).map(|n| pct.choose(n, &held)).collect()
        };
        assert_eq!(choices(7), choices(7));
        let distinct: std::collections::HashSet<_> =
            (0..32).map(|seed| format!("{:?}", choices(seed))).collect();
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
            let Chosen::Index(top) = plain.choose(1, &held) else {
                panic!("PCT never diverges")
            };
            let Chosen::Index(preempted) = demoting.choose(1, &held) else {
                panic!("PCT never diverges")
            };
            assert_ne!(
                top, preempted,
                "seed {seed}: the change point changed nothing"
            );
            // The demoted thread stays below the others afterwards.
            assert_eq!(demoting.choose(2, &held), Chosen::Index(preempted));
            assert_eq!(plain.choose(2, &held), Chosen::Index(top));
        }
    }

    #[test]
    fn a_prefix_forces_its_choices_then_takes_the_oldest() {
        let steps = steps();
        let held: Vec<&Step> = steps.iter().collect();
        let mut prefix = Plan::Prefix(vec![2, 1]).strategy();
        assert_eq!(prefix.choose(1, &held), Chosen::Index(2));
        assert_eq!(prefix.choose(2, &held[..1 + 1]), Chosen::Index(1));
        assert_eq!(prefix.choose(3, &held), Chosen::Index(0));
        let mut short = Plan::Prefix(vec![5]).strategy();
        assert_eq!(short.choose(1, &held), Chosen::Index(2));
    }
}
