//! The product's operation points, and the hook it calls at each: how a test pauses the
//! product in its own code (the live tests pass a harness `ProductPoint` there), and how an
//! application could log or meter it.

use std::future::Future;

/// A point in the product's own code where it calls its [`Hooks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Point {
    /// The session exists; the product has not subscribed to events yet.
    SessionCreated,
    /// Subscribed; the prompt is about to be posted.
    BeforePrompt,
    /// An ask was judged; its reply is about to be posted (skipped if the task was aborted
    /// meanwhile).
    BeforeReply,
    /// The product decided to abort (deadline or cancel); the abort is about to be posted.
    BeforeAbort,
    /// The agent accepted the abort.
    AfterAbort,
    /// The event stream broke; the product is about to reconnect.
    StreamLost,
    /// The session was seen idle; the product is about to read its messages.
    BeforeCollect,
}

impl Point {
    /// Every point, in the order a task usually meets them.
    pub const ALL: [Point; 7] = [
        Point::SessionCreated,
        Point::BeforePrompt,
        Point::BeforeReply,
        Point::BeforeAbort,
        Point::AfterAbort,
        Point::StreamLost,
        Point::BeforeCollect,
    ];

    /// Its name (`[a-z0-9_.-]+`, so a harness product gate can carry it).
    pub fn name(self) -> &'static str {
        match self {
            Point::SessionCreated => "session_created",
            Point::BeforePrompt => "before_prompt",
            Point::BeforeReply => "before_reply",
            Point::BeforeAbort => "before_abort",
            Point::AfterAbort => "after_abort",
            Point::StreamLost => "stream_lost",
            Point::BeforeCollect => "before_collect",
        }
    }
}

/// Called at each [`Point`]; the product waits for the returned future before going on.
pub trait Hooks: Send + Sync + 'static {
    /// The product reached `point`.
    fn at(&self, point: Point) -> impl Future<Output = ()> + Send;
}

/// Hooks that do nothing: a product in production.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {
    async fn at(&self, _point: Point) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_fit_a_product_gate() {
        let names: std::collections::HashSet<_> = Point::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), Point::ALL.len());
        for name in names {
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b)),
                "{name}"
            );
        }
    }
}
