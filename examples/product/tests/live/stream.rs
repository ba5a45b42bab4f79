//! The product's event stream, interfered with: an event it has not seen yet when it acts, and
//! the stream dropped mid-turn.

use harness_runtime::prelude::*;
use product_example::{AbortCause, Cancel, Delivery, Outcome, Task};

use crate::support::{self, arm_wire, entered};

/// The turn has finished at the agent, but its `session.idle` is held on the product's stream
/// while the product is cancelled and aborts the (already idle) session. Released, the idle
/// tells the product the turn ended: it reports the turn as completed, since the agent finished
/// it, with the abort it sent beside it, not as aborted.
#[live_agent_test(timeout = "120s")]
async fn idle_held_while_the_product_aborts(live: &mut Live) -> anyhow::Result<()> {
    live.model().reply(Reply::text("All done."));
    let agent = live.opencode_with(support::asking_the_product()).await?;
    let product = support::product(live, &agent)?;
    let cancel = Cancel::new();

    let idle = arm_wire(live, "event session.idle")?;
    let abort_answered = arm_wire(live, "response POST /session/{id}/abort")?;
    let task = Task::new("Say you are done");
    let gates = [&idle, &abort_answered];
    let report = support::run_forced(&product, &task, &cancel, gates, async {
        // The turn ended at the agent; the product has not heard.
        entered(&idle).await?;
        cancel.cancel();
        entered(&abort_answered).await?;
        abort_answered.release();
        idle.release();
        Ok(())
    })
    .await?;

    let done = Outcome::Completed {
        text: "All done.".into(),
    };
    support::ensure_outcome(&report, &done)?;
    anyhow::ensure!(report.abort == Some(AbortCause::Cancelled), "{report:?}");

    let sections = vec![("product", support::report_json(&report))];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}

/// The product's stream is dropped right before the agent's permission ask would reach it.
/// Nothing is replayed on a new subscription: the product re-subscribes, finds the ask it
/// missed among the agent's pending ones, approves it, and the turn completes. The observer,
/// subscribed on its own, saw the whole turn.
#[live_agent_test(timeout = "120s")]
async fn stream_dropped_before_the_ask_recovers(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    let answer = "Your notes say: remember the milk.";
    live.model()
        .reply(support::read_notes(&agent))
        .reply(Reply::text(answer));
    let product = support::product(live, &agent)?;
    live.wire().drop_event_stream_at("permission.asked", 1)?;

    let task = Task::new("What do my notes say?");
    let report = product.run(&task, &Cancel::new()).await?;

    let done = Outcome::Completed {
        text: answer.into(),
    };
    support::ensure_outcome(&report, &done)?;
    anyhow::ensure!(report.reconnects == 1, "{report:?}");
    anyhow::ensure!(
        report.asks.len() == 1 && report.asks[0].delivery == Delivery::Replied,
        "{:?}",
        report.asks
    );
    let counters = live.wire().counters();
    anyhow::ensure!(
        !counters.events.contains_key("permission.asked"),
        "the dropped ask was delivered after all: {counters:?}"
    );

    let sections = vec![("product", support::report_json(&report))];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}
