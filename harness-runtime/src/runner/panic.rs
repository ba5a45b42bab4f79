//! Panics inside a scenario: their message is redacted before it reaches stderr or the report.

use std::any::Any;
use std::cell::RefCell;
use std::sync::{Arc, Mutex, Once, PoisonError};

use crate::redact::Redactor;

/// The redactor of one scenario, filled in once its `Live` exists (after its runtime's workers
/// started, which is why it is a cell and not the redactor itself); an exploring scenario's
/// every run puts its own.
pub(crate) type RedactorCell = Arc<Mutex<Option<Arc<Redactor>>>>;

/// Panics on the scenario's threads redact with `redactor` from now on.
pub(crate) fn use_redactor(cell: &RedactorCell, redactor: Arc<Redactor>) {
    *cell.lock().unwrap_or_else(PoisonError::into_inner) = Some(redactor);
}

thread_local! {
    /// The scenario this thread works for (the trial thread and its runtime's workers).
    static CURRENT: RefCell<Option<RedactorCell>> = const { RefCell::new(None) };
}

/// Makes panics on this thread print through the scenario's redactor until the guard drops.
pub(crate) fn redact_on_this_thread(cell: RedactorCell) -> ThreadGuard {
    set_for_this_thread(Some(cell));
    ThreadGuard
}

/// Sets or clears this thread's scenario (runtime worker start/stop hooks).
pub(crate) fn set_for_this_thread(cell: Option<RedactorCell>) {
    let _ = CURRENT.try_with(|current| *current.borrow_mut() = cell);
}

/// Clears the thread's redactor on drop.
pub(crate) struct ThreadGuard;

impl Drop for ThreadGuard {
    fn drop(&mut self) {
        set_for_this_thread(None);
    }
}

/// Installs (once) a panic hook that redacts panics on scenario threads and defers to the
/// previous hook everywhere else.
pub(crate) fn install_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let redactor = CURRENT
                .try_with(|current| {
                    current.borrow().as_ref().and_then(|cell| {
                        cell.lock().unwrap_or_else(PoisonError::into_inner).clone()
                    })
                })
                .ok()
                .flatten();
            let Some(redactor) = redactor else {
                return previous(info);
            };
            let thread = std::thread::current();
            let location = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_default();
            let message = redactor.redact(&message(info.payload()));
            let backtrace = std::backtrace::Backtrace::capture();
            let backtrace = match backtrace.status() {
                std::backtrace::BacktraceStatus::Captured => {
                    format!("\n{}", redactor.redact(&backtrace.to_string()))
                }
                _ => String::new(),
            };
            eprintln!(
                "\nthread '{}' panicked at {location}:\n{message}{backtrace}",
                thread.name().unwrap_or("<unnamed>")
            );
        }));
    });
}

/// The text of a panic payload (`panic!("…")` yields `&str` or `String`).
pub(crate) fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "(a panic payload that is not a string)".to_string()
    }
}
