//! Operation counters: how many prompts, replies, aborts and process exits a scenario saw.

use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;

use super::GatePoint;

/// An operation the harness counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Counter {
    /// A prompt the agent accepted: counted by a pass at [`GatePoint::PromptDelivered`].
    Prompt,
    /// A permission reply posted: counted by a pass at [`GatePoint::AfterPermissionReply`].
    PermissionReply,
    /// A question reply or reject posted: counted by a pass at [`GatePoint::AfterQuestionReply`].
    QuestionReply,
    /// An abort about to be posted: counted by a pass at [`GatePoint::BeforeAbort`].
    Abort,
    /// An agent process that exited (expectedly or not): counted by provisioning with
    /// [`Gates::count`](crate::gates::Gates::count).
    ProcessExit,
}

impl Counter {
    const COUNT: usize = 5;

    fn index(self) -> usize {
        self as usize
    }

    /// The counter a pass at `point` increments, if any.
    pub(crate) fn counted_by(point: GatePoint) -> Option<Counter> {
        match point {
            GatePoint::PromptDelivered => Some(Counter::Prompt),
            GatePoint::AfterPermissionReply => Some(Counter::PermissionReply),
            GatePoint::AfterQuestionReply => Some(Counter::QuestionReply),
            GatePoint::BeforeAbort => Some(Counter::Abort),
            GatePoint::BeforePrompt
            | GatePoint::TurnCollected
            | GatePoint::BeforeGetSession
            | GatePoint::BeforeStop => None,
        }
    }
}

/// A snapshot of every counter, for evidence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Counters {
    /// [`Counter::Prompt`].
    pub prompts: u64,
    /// [`Counter::PermissionReply`].
    pub permission_replies: u64,
    /// [`Counter::QuestionReply`].
    pub question_replies: u64,
    /// [`Counter::Abort`].
    pub aborts: u64,
    /// [`Counter::ProcessExit`].
    pub process_exits: u64,
}

/// The live counters behind [`Counters`].
#[derive(Debug, Default)]
pub(crate) struct CounterTable([AtomicU64; Counter::COUNT]);

impl CounterTable {
    pub(crate) fn increment(&self, counter: Counter) {
        self.0[counter.index()].fetch_add(1, Ordering::SeqCst);
    }

    pub(crate) fn get(&self, counter: Counter) -> u64 {
        self.0[counter.index()].load(Ordering::SeqCst)
    }

    pub(crate) fn snapshot(&self) -> Counters {
        Counters {
            prompts: self.get(Counter::Prompt),
            permission_replies: self.get(Counter::PermissionReply),
            question_replies: self.get(Counter::QuestionReply),
            aborts: self.get(Counter::Abort),
            process_exits: self.get(Counter::ProcessExit),
        }
    }
}
