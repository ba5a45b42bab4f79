//! The abort-vs-permission-reply race of the product's own client, forced both ways on the
//! wire. In both scenarios the product does the same thing in the same order: it approves the
//! agent's read (the reply goes out from a task of its own) and is then cancelled (the abort goes
//! out from its event loop). The forwarder decides which of the two reaches the agent first.

use harness_runtime::prelude::*;
use product_example::{Cancel, Delivery, Task};

use crate::support::{self, ABORT, CANCELLED, REPLY, REPLY_ANSWERED, arm_wire, entered};

/// The reply reaches the agent first and is answered; only then is the abort let through: the
/// approved read runs (its result reaches the model), and the abort ends the turn after it.
#[live_agent_test(timeout = "150s")]
async fn reply_reaches_the_agent_before_the_abort(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    let (stall, after_read) = Reply::stall();
    live.model().reply(support::read_notes(&agent)).reply(stall);
    let product = support::product(live, &agent)?;
    let cancel = Cancel::new();
    let mut agent_events = support::agent_events(&agent).await?;

    let reply = arm_wire(live, REPLY)?;
    let reply_answered = arm_wire(live, REPLY_ANSWERED)?;
    let abort = arm_wire(live, ABORT)?;
    let task = Task::new("What do my notes say?");
    let gates = [&reply, &reply_answered, &abort];
    let report = support::run_forced(&product, &task, &cancel, gates, async {
        // The product replied; the reply is held before the agent.
        entered(&reply).await?;
        cancel.cancel();
        // The product aborts; the abort is held too. Both are in flight now.
        entered(&abort).await?;
        reply.release();
        entered(&reply_answered).await?;
        reply_answered.release();
        // The read ran: its result reached the model, whose answer has begun (its step
        // started) and holds the turn.
        after_read.reached().await?;
        support::part_appeared(&mut agent_events, "step-start", 2).await?;
        abort.release();
        Ok(())
    })
    .await?;

    support::ensure_outcome(&report, &CANCELLED)?;
    anyhow::ensure!(
        report.asks.len() == 1 && report.asks[0].delivery == Delivery::Replied,
        "{:?}",
        report.asks
    );
    let tools = support::tool_calls(&agent, &report.session_id).await?;
    anyhow::ensure!(tools == ["read completed"], "tool calls: {tools:?}");
    let model_requests = live.model().requests().len();
    anyhow::ensure!(model_requests == 2, "{:?}", live.model().summaries());

    let sections = vec![
        ("product", support::report_json(&report)),
        ("tool_calls", json!(tools)),
    ];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}

/// The reply is held on the wire until the agent has answered the abort, which overtakes it:
/// the turn ends aborted, the read never runs and the model is not asked again, whatever the
/// late reply gets.
#[live_agent_test(timeout = "150s")]
async fn abort_overtakes_the_reply(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model().reply(support::read_notes(&agent));
    let product = support::product(live, &agent)?;
    let cancel = Cancel::new();

    let task = Task::new("What do my notes say?");
    let report = support::run_abort_overtaking_reply(live, &product, &task, &cancel).await?;

    support::ensure_outcome(&report, &CANCELLED)?;
    anyhow::ensure!(report.asks.len() == 1, "{:?}", report.asks);
    let tools = support::tool_calls(&agent, &report.session_id).await?;
    anyhow::ensure!(
        !tools.iter().any(|t| t == "read completed"),
        "the read ran after the abort: {tools:?}"
    );
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "the read's result reached the model: {:?}",
        live.model().summaries()
    );

    let sections = vec![
        ("product", support::report_json(&report)),
        ("tool_calls", json!(tools)),
    ];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}
