//! The user presses stop exactly when the product is about to answer an ask: the race these
//! scenarios force ([`forced`]), search ([`search`]) and prove the search finds ([`proof`]).
//! The invariant, from the agent's side: no permission reply reaches the agent after the abort
//! ([`support::no_reply_after_abort`]). The correct product reads whether it is aborting after
//! its `before_reply` point, so a stop pressed there withholds the reply; the racy one
//! (`Product::with_racy_reply`, feature `racy`) read it before, and sends the reply beside the
//! abort: the agent gets it after the abort in some orderings only.

use std::time::Duration;

use harness_runtime::prelude::*;
use product_example::{Cancel, Hooks, Point, Product, Task, TaskReport};

use crate::support::{self, CANCELLED, Points};

/// Twenty searches of a deliberately racy product: `racy_searches!(body; name, …)` makes each
/// name a scenario exploring `body(live, true)` (`explore = 40`, each with a seed of its own: the
/// base seed mixed with its name). Ignored: each is meant to fail, with a shrunk schedule and
/// the line that replays it; [`proof`] runs them and checks.
macro_rules! racy_searches {
    ($body:path; $($name:ident),* $(,)?) => {$(
        #[live_agent_test(
            timeout = "60s",
            explore = 40,
            ignore = "a deliberately racy product, meant to fail: the exploration proof runs it"
        )]
        async fn $name(live: &mut Live) -> anyhow::Result<()> {
            $body(live, true).await
        }
    )*};
}

mod forced;
mod lost_ask;
mod lost_turn;
mod proof;
mod search;

/// One exploring run: the correct or racy product, stop pressed as it is about to reply; the
/// agent-side invariant checked. The correct product's report is its evidence: every ordering
/// must give the same.
pub(crate) async fn stop_at_reply(live: &mut Live, racy: bool) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    // Where a reply reaches the agent before the abort, the read runs and the model is asked
    // again: it answers nothing until the abort ends the turn.
    live.model()
        .reply(support::read_notes(&agent))
        .reply(Reply::hang());
    let cancel = Cancel::new();
    let points = Points::of(live)?.cancel_at(Point::BeforeReply, cancel.clone());
    let mut product = support::product_with(&agent, points)?;
    if racy {
        product = product.with_racy_reply();
    }
    let report = product
        .run(&Task::new("What do my notes say?"), &cancel)
        .await?;
    support::ensure_outcome(&report, &CANCELLED)?;
    support::no_reply_after_abort(&agent.observed().await)?;
    if !racy {
        assert_report(live, &report);
    }
    Ok(())
}

/// Runs `task` on `product` as a user who presses stop once nothing happened for `idle`
/// (scaled) after the model was first asked: no request or event crossed the product's wire and
/// the model was not asked again. A product that lost an event the agent sent waits for it, and
/// so does everything else: it reports the stop then, not at its deadline. A product that
/// follows the turn keeps things happening, however slow a loaded machine makes them. The
/// product's report; a product error is the race `lost` names.
pub(crate) async fn run_until_the_user_gives_up<H: Hooks>(
    live: &Live,
    product: &Product<H>,
    task: &Task,
    idle: Duration,
    lost: &str,
) -> anyhow::Result<TaskReport> {
    let cancel = Cancel::new();
    let user_gives_up = async {
        live.model().wait_for_requests(1).await?;
        let idle = scaled(idle);
        let happened = || {
            let counters = live.wire().counters();
            let wire: u64 = counters
                .requests
                .values()
                .chain(counters.events.values())
                .sum();
            (wire, live.model().requests().len())
        };
        let (mut last, mut since) = (happened(), tokio::time::Instant::now());
        while since.elapsed() < idle {
            tokio::time::sleep(IDLE_CHECK).await;
            let now = happened();
            if now != last {
                (last, since) = (now, tokio::time::Instant::now());
            }
        }
        cancel.cancel();
        std::future::pending::<anyhow::Result<std::convert::Infallible>>().await
    };
    let ran = tokio::select! {
        ran = product.run(task, &cancel) => ran,
        failed = user_gives_up => return failed.map(|never| match never {}),
    };
    ran.map_err(|error| anyhow::anyhow!("{lost}: the product failed: {error}"))
}

/// How often the user of [`run_until_the_user_gives_up`] looks whether anything happened.
const IDLE_CHECK: Duration = Duration::from_millis(100);

/// The correct product's report is the run's evidence: every explored ordering must give the
/// same (the snapshot).
pub(crate) fn assert_report(live: &Live, report: &TaskReport) {
    live.evidence()
        .record("product", support::report_json(report));
    live.assert_evidence();
}
