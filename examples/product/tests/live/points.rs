//! A gate in the product's own code: its `before_reply` hook passes a harness product point.

use harness_runtime::prelude::*;
use product_example::{Cancel, Task};

use crate::support::{self, entered};

/// The product judged the ask (approve) and is paused in its own code right before replying.
/// It is cancelled meanwhile, and the abort goes through. Released, the product sees the abort
/// and withholds the reply: no reply reaches the agent, the read never runs, the turn ends
/// aborted. The gates are armed by the attribute, their spelling checked at compile time.
#[live_agent_test(timeout = "120s", gate = ["product before_reply", "product after_abort"])]
async fn cancelled_between_judging_and_replying(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model().reply(support::read_notes(&agent));
    let product = support::product(live, &agent)?;
    let cancel = Cancel::new();

    let before_reply = support::attribute_gate(live, "before_reply")?;
    let after_abort = support::attribute_gate(live, "after_abort")?;
    let task = Task::new("What do my notes say?");
    let gates = [&before_reply, &after_abort];
    let report = support::run_forced(&product, &task, &cancel, gates, async {
        entered(&before_reply).await?;
        cancel.cancel();
        entered(&after_abort).await?;
        after_abort.release();
        before_reply.release();
        Ok(())
    })
    .await?;

    support::ensure_reply_withheld(&report)?;
    let requests = support::product_requests(live);
    anyhow::ensure!(
        !requests.iter().any(|r| r.contains("/permission/")),
        "a reply was sent: {requests:?}"
    );
    let tools = support::tool_calls(&agent, &report.session_id).await?;
    anyhow::ensure!(
        !tools.iter().any(|t| t == "read completed"),
        "the read ran: {tools:?}"
    );

    let sections = vec![
        ("product", support::report_json(&report)),
        ("tool_calls", json!(tools)),
    ];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}
