//! What the product's scenarios share: an agent that asks the product, the product wired to it
//! through the forwarder with the harness's product points in its hooks, and the "meanwhile"
//! that acts while a gate holds something.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use harness_runtime::client::{Event, EventStream};
use harness_runtime::evidence::{EventTrace, Observed};
use harness_runtime::gates::{Gate, ProductPoint, WirePoint};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;
use product_example::{
    AbortCause, AskRecord, Cancel, Delivery, Hooks, OpenCode, Outcome, Point, Product, Task,
    TaskReport, Verdict,
};

/// How long a meanwhile waits for the product to reach a gate (scaled).
pub const ENTER_CEILING: Duration = Duration::from_secs(60);

/// The file the scripted model reads: the product approves the read.
pub const NOTES: &str = "notes.txt";

/// An agent whose reads, edits and steps outside the workspace ask: the product decides them.
/// Everything else runs without asking.
pub fn asking_the_product() -> AgentOptions {
    AgentOptions::default().permission(json!({
        "*": "allow",
        "read": "ask",
        "edit": "ask",
        "external_directory": "ask",
    }))
}

/// An agent that asks the product, with `notes.txt` in its workspace.
pub async fn agent_with_notes(live: &mut Live) -> anyhow::Result<Agent> {
    let agent = live.opencode_with(asking_the_product()).await?;
    std::fs::write(agent.workspace().join(NOTES), "remember the milk\n")?;
    Ok(agent)
}

/// The model's first reply: read `notes.txt` (an ask the product approves).
pub fn read_notes(agent: &Agent) -> Reply {
    let path = agent.workspace().join(NOTES);
    Reply::tool_call("read", json!({"filePath": path.display().to_string()}))
}

/// The product's hooks in a test: each of its [`Point`]s passes the harness product point of the
/// same name, so `live.gates().arm(gates::Point::product("before_reply")?)` pauses the product there.
pub struct Points {
    points: HashMap<Point, ProductPoint>,
    /// Pulled when the product reaches its point, before that point's product point passes.
    cancels: Vec<(Point, Cancel)>,
}

impl Points {
    /// A product point for each of the product's points.
    pub fn of(live: &Live) -> anyhow::Result<Points> {
        let mut points = HashMap::new();
        for point in Point::ALL {
            points.insert(point, live.gates().product_point(point.name())?);
        }
        Ok(Points {
            points,
            cancels: Vec::new(),
        })
    }

    /// Pulls `cancel` each time the product reaches `point`, before the harness product point
    /// there passes: the user presses stop exactly when the product is about to do what
    /// `point` precedes (`BeforeReply`: answer an ask).
    pub fn cancel_at(mut self, point: Point, cancel: Cancel) -> Points {
        self.cancels.push((point, cancel));
        self
    }
}

impl Hooks for Points {
    fn at(&self, point: Point) -> impl Future<Output = ()> + Send {
        for (at, cancel) in &self.cancels {
            if *at == point {
                cancel.cancel();
            }
        }
        let gate = self.points.get(&point).cloned();
        async move {
            if let Some(gate) = gate {
                gate.pass().await;
            }
        }
    }
}

/// The product, talking to `agent` through its forwarder (so wire gates and faults apply) and
/// passing the scenario's product points.
pub fn product(live: &Live, agent: &Agent) -> anyhow::Result<Product<Points>> {
    product_with(agent, Points::of(live)?)
}

/// The product, talking to `agent` through its forwarder, calling `hooks` (e.g. points that also
/// pull a cancel, [`Points::cancel_at`]).
pub fn product_with(agent: &Agent, hooks: Points) -> anyhow::Result<Product<Points>> {
    let client = OpenCode::new(&agent.forwarded_url(), agent.workspace())?;
    Ok(Product::new(client).with_hooks(hooks))
}

/// The product's permission reply before the agent gets it.
pub const REPLY: &str = "request POST /permission/{requestID}/reply";
/// The agent's answer to the product's permission reply.
pub const REPLY_ANSWERED: &str = "response POST /permission/{requestID}/reply";
/// The product's abort before the agent gets it.
pub const ABORT: &str = "request POST /session/{id}/abort";
/// The agent's answer to the product's abort.
pub const ABORT_ANSWERED: &str = "response POST /session/{id}/abort";

/// Arms a gate at the wire point spelled `spelling` (`request POST /session/{id}/abort`).
pub fn arm_wire(live: &Live, spelling: &str) -> anyhow::Result<Arc<Gate>> {
    Ok(live.gates().arm(WirePoint::parse(spelling)?))
}

/// The product gate `product <name>` the scenario's attribute armed.
pub fn attribute_gate(live: &Live, name: &str) -> anyhow::Result<Arc<Gate>> {
    live.gates()
        .gate(harness_runtime::gates::Point::product(name)?)
        .ok_or_else(|| anyhow::anyhow!("the attribute did not arm `product {name}`"))
}

/// Runs `meanwhile`, then releases `gates` whatever it did: a failed step fails the scenario at
/// once instead of leaving the product held until the scenario's timeout.
pub async fn meanwhile<T, const N: usize>(
    gates: [&Arc<Gate>; N],
    meanwhile: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let gates = gates.map(Arc::clone);
    let result = meanwhile.await;
    for gate in gates {
        gate.release();
    }
    result
}

/// Runs the product's `task` beside `forcing`, which forces an interleaving with `gates` (all
/// released when it ends, however it ends), and returns the product's report; `forcing`'s
/// failure comes first.
pub async fn run_forced<const N: usize>(
    product: &Product<Points>,
    task: &Task,
    cancel: &Cancel,
    gates: [&Arc<Gate>; N],
    forcing: impl Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<TaskReport> {
    let (report, forced) = tokio::join!(product.run(task, cancel), meanwhile(gates, forcing));
    forced?;
    Ok(report?)
}

/// Runs the product's `task` with its permission reply held on the wire until the agent has
/// answered the abort: the abort overtakes the reply. `cancel` is pulled once the reply is held
/// (a cancel already pulled, by the product's hooks, stays as it is).
pub async fn run_abort_overtaking_reply(
    live: &Live,
    product: &Product<Points>,
    task: &Task,
    cancel: &Cancel,
) -> anyhow::Result<TaskReport> {
    let reply = arm_wire(live, REPLY)?;
    let abort_answered = arm_wire(live, ABORT_ANSWERED)?;
    let gates = [&reply, &abort_answered];
    run_forced(product, task, cancel, gates, async {
        entered(&reply).await?;
        cancel.cancel();
        // The agent accepted the abort while the reply is still held.
        entered(&abort_answered).await?;
        abort_answered.release();
        reply.release();
        Ok(())
    })
    .await
}

/// The outcome of a task the scenario cancelled and the agent aborted.
pub const CANCELLED: Outcome = Outcome::Aborted {
    cause: AbortCause::Cancelled,
};

/// Fails unless the task ended with `expected`.
pub fn ensure_outcome(report: &TaskReport, expected: &Outcome) -> anyhow::Result<()> {
    anyhow::ensure!(
        &report.outcome == expected,
        "expected {expected:?}, the product reported {report:?}"
    );
    Ok(())
}

/// The task's only ask, or a failure listing its asks.
pub fn only_ask(report: &TaskReport) -> anyhow::Result<&AskRecord> {
    match report.asks.as_slice() {
        [ask] => Ok(ask),
        asks => anyhow::bail!("expected one ask, the product reported {asks:?}"),
    }
}

/// Fails unless the task was cancelled and aborted with its one ask approved but not replied to
/// (the product saw the abort before replying).
pub fn ensure_reply_withheld(report: &TaskReport) -> anyhow::Result<()> {
    ensure_outcome(report, &CANCELLED)?;
    let ask = only_ask(report)?;
    anyhow::ensure!(
        ask.verdict == Verdict::Approve && ask.delivery == Delivery::Withheld,
        "expected the approved reply withheld: {ask:?}"
    );
    Ok(())
}

/// Records `sections`, the product's requests as the forwarder logged them and what the
/// observer saw the agent do, and asserts the scenario's snapshot.
pub async fn snapshot(live: &Live, agent: &Agent, sections: Vec<(&str, serde_json::Value)>) {
    for (name, value) in sections {
        live.evidence().record(name, value);
    }
    live.evidence()
        .record("product_requests", product_requests(live));
    live.evidence().record_observed(&agent.observed().await);
    live.assert_evidence();
}

/// Waits until the product reached `gate`.
pub async fn entered(gate: &Gate) -> anyhow::Result<()> {
    Ok(gate.wait_until_entered_within(ENTER_CEILING).await?)
}

/// The product's report as evidence: its outcome, asks and reconnects (no ids).
pub fn report_json(report: &TaskReport) -> serde_json::Value {
    serde_json::to_value(report).expect("a report serializes")
}

/// The session's tool calls as the agent has them (asked directly, not through the forwarder,
/// so the product's request log stays the product's): `"read completed"`, ….
pub async fn tool_calls(agent: &Agent, session_id: &str) -> anyhow::Result<Vec<String>> {
    let messages = agent.client().messages(session_id).await?;
    Ok(messages
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| {
            Some(format!(
                "{} {}",
                p.tool.as_deref()?,
                p.state.as_ref()?.status
            ))
        })
        .collect())
}

/// The product's requests as the forwarder logged them, `METHOD route status`, in order.
pub fn product_requests(live: &Live) -> Vec<String> {
    live.wire()
        .requests()
        .iter()
        .map(|r| match r.status {
            Some(status) => format!("{} {} {status}", r.method, r.route),
            None => format!("{} {} (no response)", r.method, r.route),
        })
        .collect()
}

/// The agent's own event stream for its workspace, subscribed now: the scenario's view of what
/// the agent does, beside the product's (direct, not through the forwarder).
pub async fn agent_events(agent: &Agent) -> anyhow::Result<EventStream> {
    Ok(agent.client().subscribe().await?)
}

/// Waits until the `nth` part of type `kind` (`step-start`, `tool`, …) appeared in the agent's
/// events: e.g. the 2nd `step-start` is the model's answer after a tool starting to stream.
pub async fn part_appeared(events: &mut EventStream, kind: &str, nth: usize) -> anyhow::Result<()> {
    let ceiling = scaled(ENTER_CEILING);
    let seen = async {
        let mut parts = HashSet::new();
        while let Some(event) = events.next_event().await? {
            if let Event::MessagePartUpdated { part, .. } = event
                && part.kind == kind
                && parts.insert(part.id)
                && parts.len() == nth
            {
                return Ok(());
            }
        }
        anyhow::bail!("the agent's event stream ended before {kind} part #{nth}")
    };
    tokio::time::timeout(ceiling, seen)
        .await
        .map_err(|_| anyhow::anyhow!("no {kind} part #{nth} within {ceiling:?}"))?
}

/// The invariant the exploration checks, from the agent's side: no permission reply reached the
/// agent after the abort. In the agent's own order of a session's events (the observer's
/// stream, not the product's), a `permission.replied` after the abort's `session.error` is a
/// reply that landed on an ask the abort had already cancelled. The first `session.error`
/// counts as the abort's: in the scenarios that use this, nothing else errs.
pub fn no_reply_after_abort(observed: &Observed) -> anyhow::Result<()> {
    for session in &observed.sessions {
        no_reply_after_abort_in(&session.id, &session.summary.events)?;
    }
    Ok(())
}

/// [`no_reply_after_abort`] over one session's event trace, as the observer records it and a
/// snapshot's `events` lists it (consecutive repeats collapsed, which keeps the order of
/// different events).
pub fn no_reply_after_abort_in(session: &str, trace: &EventTrace) -> anyhow::Result<()> {
    let runs = trace.runs();
    let position = |kind: &str, from: usize| runs[from..].iter().position(|(t, _)| t == kind);
    let Some(abort) = position(ABORTED, 0) else {
        return Ok(());
    };
    if position(REPLIED, abort + 1).is_some() {
        anyhow::bail!(
            "a permission reply reached the agent after the abort: in {session} the agent's \
             events came in the order {}, with `{REPLIED}` after the abort's `{ABORTED}` (the \
             reply landed on an ask the abort had already cancelled)",
            trace.lines().join(", ")
        );
    }
    Ok(())
}

/// The event the agent sends when an abort ends a session's turn.
const ABORTED: &str = "session.error";
/// The event the agent sends when a reply settles an ask.
const REPLIED: &str = "permission.replied";
