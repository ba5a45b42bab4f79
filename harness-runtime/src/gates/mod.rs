//! Forwarding gates: deterministic interleavings of agent operations.

/// A named point at which the forwarding client (and the harness) can pause an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GatePoint {
    /// Before a prompt is posted.
    BeforePrompt,
    /// After the prompt post returned (the agent has the prompt).
    PromptDelivered,
    /// After a whole turn was collected.
    TurnCollected,
    /// Before an abort is posted.
    BeforeAbort,
    /// Before a session is fetched.
    BeforeGetSession,
    /// After a permission reply was posted.
    AfterPermissionReply,
    /// After a question reply (or reject) was posted.
    AfterQuestionReply,
    /// Before the harness stops an agent server.
    BeforeStop,
}

/// The scenario's gates and operation counters. Shared (`Arc`) by the client and provisioning.
#[derive(Debug, Default)]
pub struct Gates {}

impl Gates {
    /// Called by the client and provisioning at `point`: returns at once unless a gate is armed
    /// there, in which case it publishes "entered" and waits for the release.
    pub async fn pass(&self, point: GatePoint) {
        let _ = point;
    }
}
