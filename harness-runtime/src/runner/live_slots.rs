//! At most `LIVE_MODEL_CONCURRENCY` live-model scenarios (the real model, live or recording)
//! at once: a local model serves one request at a time, and a provider's rate limit answers
//! several at once with 429s.
//!
//! A live-model trial takes a slot before anything of its run starts (its runtime, its
//! ceiling, every run of an exploring or k-of-n scenario) and keeps it until its trial ends.
//! Waiting holds its test thread; [`order`](super::order) starts such trials after every other,
//! so the wait is rare and blocks nothing that could run. The wait has no ceiling (the slot's
//! holders have theirs) but says what it waits for, again every [`REPEAT`].

use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::model::ModelPlan;
use crate::progress::{progress, seconds};
use crate::settings;

/// How often a long wait says it is still waiting.
const REPEAT: Duration = Duration::from_secs(60);

/// The run's slots (one test process: nextest's process per scenario needs its `test-groups`).
static SLOTS: OnceLock<Slots> = OnceLock::new();

/// A slot held by a trial until this is dropped.
pub(super) struct Held {
    slots: &'static Slots,
    name: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.slots.release(&self.name);
    }
}

/// The slot `name` needs when `plan` talks to the real model, taken (waiting for it, saying
/// so on its progress line); `None` for every other plan.
pub(super) fn take(plan: &ModelPlan, name: &str) -> Option<Held> {
    if !plan.is_real_model() {
        return None;
    }
    let slots = SLOTS.get_or_init(|| Slots::new(settings::model_concurrency()));
    slots.take(name, &|line| progress(name, line));
    Some(Held {
        slots,
        name: name.to_owned(),
    })
}

/// `limit` slots and the scenarios holding them.
struct Slots {
    limit: usize,
    busy: Mutex<Vec<String>>,
    freed: Condvar,
}

impl Slots {
    fn new(limit: usize) -> Self {
        Slots {
            limit: limit.max(1),
            busy: Mutex::new(Vec::new()),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<String>> {
        // Every update is one push or remove: a poisoned lock holds a consistent list.
        self.busy.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes a slot for `name`, waiting while all are busy; `say` gets the waiting lines.
    fn take(&self, name: &str, say: &dyn Fn(&str)) {
        let mut busy = self.lock();
        let started = Instant::now();
        let mut said: Option<Instant> = None;
        while busy.len() >= self.limit {
            if said.is_none_or(|at| at.elapsed() >= REPEAT) {
                let still = if said.is_some() {
                    format!("still waiting after {}", seconds(started.elapsed()))
                } else {
                    "waiting".to_owned()
                };
                say(&format!(
                    "{still} for a live-model slot ({} of {} busy: {}; {}={})",
                    busy.len(),
                    self.limit,
                    busy.join(", "),
                    settings::MODEL_CONCURRENCY,
                    self.limit,
                ));
                said = Some(Instant::now());
            }
            busy = self
                .freed
                .wait_timeout(busy, REPEAT)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        busy.push(name.to_owned());
        drop(busy);
        if said.is_some() {
            say(&format!(
                "got a live-model slot after {}",
                seconds(started.elapsed())
            ));
        }
    }

    fn release(&self, name: &str) {
        let mut busy = self.lock();
        if let Some(at) = busy.iter().position(|held| held == name) {
            busy.remove(at);
        }
        drop(busy);
        self.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn leaked(limit: usize) -> &'static Slots {
        Box::leak(Box::new(Slots::new(limit)))
    }

    #[test]
    fn only_real_model_plans_take_a_slot() {
        assert!(take(&ModelPlan::Scripted, "a::scripted").is_none());
        let replay = ModelPlan::Replay {
            path: "c.json".into(),
        };
        assert!(take(&replay, "a::replayed").is_none());
    }

    #[test]
    fn never_more_than_the_limit_hold_a_slot_and_waiters_say_who_is_busy() {
        for limit in [1, 2] {
            let slots = leaked(limit);
            let (now, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let lines = Arc::new(Mutex::new(Vec::new()));
            let threads: Vec<_> = (0..4)
                .map(|i| {
                    let (now, most, lines) = (now.clone(), most.clone(), lines.clone());
                    std::thread::spawn(move || {
                        let name = format!("t::s{i}");
                        let say = |line: &str| lines.lock().unwrap().push(line.to_owned());
                        slots.take(&name, &say);
                        let held = Held { slots, name };
                        let running = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(running, Ordering::SeqCst);
                        // Holds the slot a while so the threads overlap: it waits for nothing.
                        std::thread::sleep(Duration::from_millis(30));
                        now.fetch_sub(1, Ordering::SeqCst);
                        drop(held);
                    })
                })
                .collect();
            for thread in threads {
                thread.join().unwrap();
            }
            assert_eq!(most.load(Ordering::SeqCst), limit);
            let lines = lines.lock().unwrap();
            let waiting = format!(" for a live-model slot ({limit} of {limit} busy: t::s");
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("waiting") && l.contains(&waiting)),
                "{lines:?}"
            );
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("got a live-model slot after ")),
                "{lines:?}"
            );
            assert!(slots.lock().is_empty());
        }
    }
}
