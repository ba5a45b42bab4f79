//! The named points at which operations can be paused, and their attribute names.

use std::fmt;

use harness_opencode_api::spelling::CLIENT_POINTS;

/// A named point at which the forwarding client (and the harness) can pause an operation.
///
/// Every point has an attribute name (`#[live_agent_test(gate = "abort")]`, [`GatePoint::name`]).
/// The examples below simulate the client with a task that calls [`Gates::pass`] where the real
/// client would; in a scenario the client does it for you and the scenario only arms, waits and
/// releases.
///
/// [`Gates::pass`]: crate::gates::Gates::pass
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GatePoint {
    /// `before_prompt`: before a prompt is posted. Pauses the prompt before the agent has it, so a
    /// scenario can, meanwhile, change what the prompt will meet (answer a permission, abort the
    /// session, stop the agent) and then let the prompt go.
    ///
    /// ```
    /// # use harness_runtime::gates::{Gates, GatePoint};
    /// # use std::{sync::Arc, time::Duration};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Arc::new(Gates::default());
    /// let gate = gates.arm(GatePoint::BeforePrompt);
    /// let client = tokio::spawn({
    ///     let gates = gates.clone();
    ///     async move { gates.pass(GatePoint::BeforePrompt).await /* then POST the prompt */ }
    /// });
    /// gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    /// // Meanwhile: the prompt is not posted yet; do what must happen first.
    /// gate.release();
    /// client.await.unwrap();
    /// # });
    /// ```
    BeforePrompt,
    /// `prompt_delivered`: after the prompt post returned (the agent has the prompt; counts a
    /// [`Counter::Prompt`](crate::gates::Counter::Prompt)). Pauses the client between "the agent
    /// accepted the prompt" and "the client collects the turn", so a scenario can, meanwhile,
    /// act on a turn that is running (abort it, reply to a permission it asked) before the client
    /// looks at the result. Arm the Nth pass to pause only the Nth prompt.
    ///
    /// ```
    /// # use harness_runtime::gates::{Counter, Gates, GatePoint};
    /// # use std::{sync::Arc, time::Duration};
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Arc::new(Gates::default());
    /// let second = gates.arm_nth(GatePoint::PromptDelivered, std::num::NonZeroU32::new(2).unwrap()); // pause the second prompt only
    /// let client = tokio::spawn({
    ///     let gates = gates.clone();
    ///     async move {
    ///         gates.pass(GatePoint::PromptDelivered).await; // first prompt: passes through
    ///         gates.pass(GatePoint::PromptDelivered).await; // second prompt: pauses
    ///     }
    /// });
    /// second.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    /// assert_eq!(gates.counted(Counter::Prompt), 2);
    /// // Meanwhile: the second turn runs in the agent; abort it, answer its permission, ...
    /// second.release();
    /// client.await.unwrap();
    /// # });
    /// ```
    PromptDelivered,
    /// `turn_collected`: after a whole turn was collected, before the client returns it. Pauses
    /// the caller of a prompt after its turn is complete, so a scenario can, meanwhile, observe
    /// the agent between turns (session status, messages) while the caller is provably not
    /// sending anything.
    ///
    /// ```
    /// # use harness_runtime::gates::{Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::default();
    /// let gate = gates.arm(GatePoint::TurnCollected);
    /// let caller = async {
    ///     gates.pass(GatePoint::TurnCollected).await; // the client, after collecting the turn
    ///     "the turn"
    /// };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     // Meanwhile: inspect the idle session; the caller has not seen its turn yet.
    ///     gate.release();
    /// };
    /// let (turn, ()) = tokio::join!(caller, scenario);
    /// assert_eq!(turn, "the turn");
    /// # });
    /// ```
    TurnCollected,
    /// `abort`: before an abort is posted (counts a [`Counter::Abort`](crate::gates::Counter::Abort)).
    /// Pauses an abort so a scenario can, meanwhile, let the turn it targets reach a chosen state
    /// (a tool running, a permission asked, the turn finished) and so test "abort races X".
    ///
    /// ```
    /// # use harness_runtime::gates::{Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::from_names(&["abort"]).unwrap(); // `gate = "abort"` on the attribute
    /// let gate = gates.gate(GatePoint::BeforeAbort).unwrap();
    /// let abort = async { gates.pass(GatePoint::BeforeAbort).await /* then POST abort */ };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     // Meanwhile: wait until the turn reaches the state the abort must race.
    ///     gate.release();
    /// };
    /// tokio::join!(abort, scenario);
    /// # });
    /// ```
    BeforeAbort,
    /// `get_session`: before a session is fetched. Pauses a recovery or status read so a scenario
    /// can, meanwhile, change the session under it (restart the agent, delete the session) and
    /// check that the read sees the new state or fails cleanly.
    ///
    /// ```
    /// # use harness_runtime::gates::{Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::default();
    /// let gate = gates.arm(GatePoint::BeforeGetSession);
    /// let read = async { gates.pass(GatePoint::BeforeGetSession).await /* then GET session */ };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     // Meanwhile: restart the agent on the same root.
    ///     gate.release();
    /// };
    /// tokio::join!(read, scenario);
    /// # });
    /// ```
    BeforeGetSession,
    /// `permission_reply`: after a permission reply was posted (counts a
    /// [`Counter::PermissionReply`](crate::gates::Counter::PermissionReply)). Pauses the replier
    /// after the agent has the reply, so a scenario can, meanwhile, observe what the reply
    /// caused (the tool runs, the next permission) before the replier continues.
    ///
    /// ```
    /// # use harness_runtime::gates::{Counter, Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::default();
    /// let gate = gates.arm(GatePoint::AfterPermissionReply);
    /// let reply = async { /* POST the reply, then */ gates.pass(GatePoint::AfterPermissionReply).await };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     assert_eq!(gates.counted(Counter::PermissionReply), 1);
    ///     // Meanwhile: watch the tool the permission allowed start.
    ///     gate.release();
    /// };
    /// tokio::join!(reply, scenario);
    /// # });
    /// ```
    AfterPermissionReply,
    /// `question_reply`: after a question reply (or reject) was posted (counts a
    /// [`Counter::QuestionReply`](crate::gates::Counter::QuestionReply)). Like
    /// `permission_reply`, for questions: a scenario can, meanwhile, observe the turn resuming
    /// with the answer.
    ///
    /// ```
    /// # use harness_runtime::gates::{Counter, Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::default();
    /// let gate = gates.arm(GatePoint::AfterQuestionReply);
    /// let reply = async { /* POST the answer, then */ gates.pass(GatePoint::AfterQuestionReply).await };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     assert_eq!(gates.counted(Counter::QuestionReply), 1);
    ///     gate.release();
    /// };
    /// tokio::join!(reply, scenario);
    /// # });
    /// ```
    AfterQuestionReply,
    /// `stop`: before the harness stops an agent server. Pauses the stop so a scenario can,
    /// meanwhile, have operations in flight when the server goes away (a prompt posted, a stream
    /// open) and check how they end. Teardown calls [`Gates::release_all`] first, so an armed
    /// `stop` never hangs the end of a scenario.
    ///
    /// [`Gates::release_all`]: crate::gates::Gates::release_all
    ///
    /// ```
    /// # use harness_runtime::gates::{Gates, GatePoint};
    /// # use std::time::Duration;
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let gates = Gates::default();
    /// let gate = gates.arm(GatePoint::BeforeStop);
    /// let stop = async { gates.pass(GatePoint::BeforeStop).await /* then terminate, reap */ };
    /// let scenario = async {
    ///     gate.wait_until_entered_within(Duration::from_secs(5)).await.unwrap();
    ///     // Meanwhile: start the operation that must be in flight when the server stops.
    ///     gate.release();
    /// };
    /// tokio::join!(stop, scenario);
    /// # });
    /// ```
    BeforeStop,
}

impl GatePoint {
    /// Every point, in declaration order.
    pub const ALL: [GatePoint; CLIENT_POINTS.len()] = [
        GatePoint::BeforePrompt,
        GatePoint::PromptDelivered,
        GatePoint::TurnCollected,
        GatePoint::BeforeAbort,
        GatePoint::BeforeGetSession,
        GatePoint::AfterPermissionReply,
        GatePoint::AfterQuestionReply,
        GatePoint::BeforeStop,
    ];

    /// The attribute name of this point (`gate = "<name>"`): its entry of
    /// `harness_opencode_api::spelling::CLIENT_POINTS`, the list `#[live_agent_test]` checks names
    /// against at compile time.
    pub const fn name(self) -> &'static str {
        match self {
            GatePoint::BeforePrompt => CLIENT_POINTS[0],
            GatePoint::PromptDelivered => CLIENT_POINTS[1],
            GatePoint::TurnCollected => CLIENT_POINTS[2],
            GatePoint::BeforeAbort => CLIENT_POINTS[3],
            GatePoint::BeforeGetSession => CLIENT_POINTS[4],
            GatePoint::AfterPermissionReply => CLIENT_POINTS[5],
            GatePoint::AfterQuestionReply => CLIENT_POINTS[6],
            GatePoint::BeforeStop => CLIENT_POINTS[7],
        }
    }

    /// The point with attribute name `name`, if any. Exact match: names are lowercase.
    pub fn from_name(name: &str) -> Option<GatePoint> {
        GatePoint::ALL
            .into_iter()
            .find(|point| point.name() == name)
    }

    /// Every attribute name, comma-separated: for error messages.
    pub(crate) fn names_list() -> String {
        GatePoint::ALL.map(GatePoint::name).join(", ")
    }

    /// A dense index for per-point tables.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// This point's bit in an armed-points mask.
    pub(crate) const fn bit(self) -> u32 {
        1 << self.index()
    }
}

impl fmt::Display for GatePoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::{CLIENT_POINTS, GatePoint};

    /// Every point has its own name, the list's entry at its place in [`GatePoint::ALL`], which
    /// holds every point once in declaration order; the name finds the point again.
    #[test]
    fn every_point_has_its_own_name() {
        for (i, point) in GatePoint::ALL.into_iter().enumerate() {
            assert_eq!(
                point.index(),
                i,
                "{point:?} is out of declaration order in ALL"
            );
            assert_eq!(point.name(), CLIENT_POINTS[i], "{point:?}");
            assert_eq!(GatePoint::from_name(point.name()), Some(point));
        }
        for (i, name) in CLIENT_POINTS.iter().enumerate() {
            assert!(
                !CLIENT_POINTS[..i].contains(name),
                "`{name}` names two points"
            );
        }
    }
}
