//! A gate in the product's own code: its `before_reply` hook passes a harness product point.

use harness_runtime::prelude::*;
use product_example::{AbortCause, Cancel, Delivery, Outcome, Task, Verdict};

use crate::support::{self, entered, meanwhile};

/// The product judged the ask (approve) and is paused in its own code right before replying.
/// It is cancelled meanwhile, and the abort goes through. Released, the product sees the abort
/// and withholds the reply: no reply reaches the agent, the read never runs, the turn ends
/// aborted.
#[live_agent_test(timeout = "120s")]
async fn cancelled_between_judging_and_replying(live: &mut Live) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model().reply(support::read_notes(&agent));
    let product = support::product(live, &agent)?;
    let cancel = Cancel::new();

    let before_reply = live.gates().arm_product("before_reply")?;
    let after_abort = live.gates().arm_product("after_abort")?;
    let task = Task::new("What do my notes say?");
    let run = product.run(&task, &cancel);
    let forced = meanwhile([&before_reply, &after_abort], async {
        entered(&before_reply).await?;
        cancel.cancel();
        entered(&after_abort).await?;
        after_abort.release();
        before_reply.release();
        anyhow::Ok(())
    });
    let (report, forced) = tokio::join!(run, forced);
    forced?;
    let report = report?;

    anyhow::ensure!(
        report.outcome
            == Outcome::Aborted {
                cause: AbortCause::Cancelled
            },
        "{report:?}"
    );
    let [ask] = report.asks.as_slice() else {
        anyhow::bail!("asks: {:?}", report.asks);
    };
    anyhow::ensure!(
        ask.verdict == Verdict::Approve && ask.delivery == Delivery::Withheld,
        "{ask:?}"
    );
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

    live.evidence()
        .record("product", support::report_json(&report));
    live.evidence().record("product_requests", requests);
    live.evidence().record("tool_calls", &tools);
    support::record_observed(live, &agent).await;
    live.assert_evidence();
    Ok(())
}
