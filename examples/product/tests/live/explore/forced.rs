//! The race forced on purpose with gates, as plain scenarios: the correct product withholds
//! its reply, the racy one's reply lands after the abort, and the invariant tells the recorded
//! orders apart.

use harness_runtime::evidence::EventTrace;
use harness_runtime::prelude::*;
use product_example::{Cancel, Delivery, Point, Task};

use crate::support::{self, CANCELLED, Points, entered};

/// Stop is pressed as the correct product is about to reply; its `before_reply` point is held
/// until the abort went through. Released, the product sees the abort and withholds the reply:
/// no reply reaches the agent, the turn ends aborted, and the invariant holds.
#[live_agent_test(timeout = "120s", gate = ["product before_reply", "product after_abort"])]
async fn stop_as_the_product_replies_withholds_the_reply(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model().reply(support::read_notes(&agent));
    let cancel = Cancel::new();
    let points = Points::of(live)?.cancel_at(Point::BeforeReply, cancel.clone());
    let product = support::product_with(&agent, points)?;

    let before_reply = support::attribute_gate(live, "before_reply")?;
    let after_abort = support::attribute_gate(live, "after_abort")?;
    let task = Task::new("What do my notes say?");
    let gates = [&before_reply, &after_abort];
    let report = support::run_forced(&product, &task, &cancel, gates, async {
        // The hook pulled the cancel on the way in.
        entered(&before_reply).await?;
        entered(&after_abort).await?;
        after_abort.release();
        before_reply.release();
        Ok(())
    })
    .await?;

    support::ensure_reply_withheld(&report)?;
    support::no_reply_after_abort(&agent.observed().await)?;

    let tools = support::tool_calls(&agent, &report.session_id).await?;
    let sections = vec![
        ("product", support::report_json(&report)),
        ("tool_calls", json!(tools)),
    ];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}

/// Stop is pressed as the racy product is about to reply: it had read "not aborting" before
/// its point and replies anyway. The reply is held on the wire until the agent answered the
/// abort, so it lands on an ask the abort already cancelled: the invariant must fail (this
/// proves it can).
#[live_agent_test(timeout = "120s")]
async fn racy_reply_after_the_abort_breaks_the_invariant(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model().reply(support::read_notes(&agent));
    let cancel = Cancel::new();
    let points = Points::of(live)?.cancel_at(Point::BeforeReply, cancel.clone());
    let product = support::product_with(&agent, points)?.with_racy_reply();

    let task = Task::new("What do my notes say?");
    let report = support::run_abort_overtaking_reply(live, &product, &task, &cancel).await?;

    support::ensure_outcome(&report, &CANCELLED)?;
    let ask = support::only_ask(&report)?;
    anyhow::ensure!(ask.delivery == Delivery::Replied, "{ask:?}");
    let observed = agent.observed().await;
    let Err(broken) = support::no_reply_after_abort(&observed) else {
        anyhow::bail!(
            "the invariant held although the reply reached the agent after the abort: {}",
            serde_json::to_string(&observed)?
        );
    };
    let said = broken.to_string();
    anyhow::ensure!(
        said.contains("`permission.replied` after the abort's `session.error`"),
        "{said}"
    );
    Ok(())
}

/// The invariant tells apart the two orders `races.rs` recorded: the abort overtaking the reply
/// (`permission.replied` after `session.error`) fails it, the reply first passes it. Reads the
/// recorded snapshots; no agent runs.
#[live_agent_test]
async fn the_invariant_tells_the_recorded_orders_apart(_live: &mut Live) -> anyhow::Result<()> {
    let recorded = |scenario: &str| -> anyhow::Result<EventTrace> {
        let path = format!("{}/snapshots/{scenario}.snap", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| anyhow::anyhow!("could not read {path}: {e}"))?;
        observed_events(&text).ok_or_else(|| anyhow::anyhow!("{path} records no observed events"))
    };
    let overtaken = recorded("races__abort_overtakes_the_reply")?;
    let Err(broken) = support::no_reply_after_abort_in("[session-1]", &overtaken) else {
        anyhow::bail!("the invariant held for the abort overtaking the reply: {overtaken:?}");
    };
    anyhow::ensure!(
        broken.to_string().contains(
            "session.error, session.status ×2, permission.replied, with `permission.replied`"
        ),
        "{broken}"
    );
    let in_order = recorded("races__reply_reaches_the_agent_before_the_abort")?;
    support::no_reply_after_abort_in("[session-1]", &in_order)?;
    Ok(())
}

/// The first observed session's `events` of a snapshot, as a trace (`session.status ×2` is
/// two `session.status`).
fn observed_events(snapshot: &str) -> Option<EventTrace> {
    let mut lines = snapshot
        .lines()
        .skip_while(|l| l.trim() != "- observed:")
        .skip_while(|l| l.trim() != "events:");
    let header = lines.next()?;
    let indent = header.len() - header.trim_start().len();
    let types = lines
        .take_while(|l| l.len() - l.trim_start().len() > indent)
        .flat_map(|l| {
            let item = l.trim().trim_start_matches("- ").trim_matches('"');
            let (kind, n) = match item.split_once(" ×") {
                Some((kind, n)) => (kind, n.parse().unwrap_or(1)),
                None => (item, 1),
            };
            std::iter::repeat_n(kind.to_string(), n)
        });
    Some(EventTrace::from_types(types))
}
