//! The agent runs ahead of the product: a product that opens its event stream only once its
//! prompt was accepted (`Product::with_late_subscribe`, feature `racy`) misses a turn that ended
//! before the stream was open: it waits for an end that already went, until its user gives up
//! (stop, pressed once nothing happened for two seconds) or its deadline. Whether the turn
//! ended first is the agent's progress, which the scheduler orders: the scripted model's answer
//! is a decision point, and after it went nothing else goes until the agent settled. So the
//! search finds the race, and its schedule replays it, every time; the correct product (it
//! subscribes before it prompts) passes every ordering of the same space.

use std::time::Duration;

use harness_runtime::prelude::*;
use product_example::{Outcome, Task};

use crate::support::{self, Points};

/// What the scenario says when the product lost the turn.
pub(crate) const LOST: &str = "the product lost a turn that ended before it followed it";
/// The agent's whole answer.
const ANSWER: &str = "Your notes say: remember the milk.";
/// How long the product waits for the turn before it aborts it, and for the abort to settle
/// (both scaled): a turn held step by step still ends well within them.
const DEADLINE: Duration = Duration::from_secs(8);
const SETTLE: Duration = Duration::from_secs(1);
/// How long nothing may happen, once the model was asked, before the user presses stop
/// (scaled): a product that follows the turn keeps its steps going (each held for the quiet
/// window, 30 ms); one that lost it would wait for its deadline, so a failing run ends here
/// instead of there.
const USER_WAITS: Duration = Duration::from_secs(2);

/// One exploring run: the product prompts, the model answers in one text turn, and the
/// product must report that turn completed with the answer.
pub(crate) async fn follow_the_turn(live: &mut Live, late: bool) -> anyhow::Result<()> {
    let agent = live.opencode().await?;
    live.model().reply(Reply::text(ANSWER));
    let mut product = support::product_with(&agent, Points::of(live)?)?;
    if late {
        product = product.with_late_subscribe();
    }
    let task = Task::new("What do my notes say?")
        .deadline(scaled(DEADLINE))
        .settle(scaled(SETTLE));
    let report =
        super::run_until_the_user_gives_up(live, &product, &task, USER_WAITS, LOST).await?;
    let completed = Outcome::Completed {
        text: ANSWER.to_owned(),
    };
    anyhow::ensure!(
        report.outcome == completed,
        "{LOST}: the agent completed it, the product reported {report:?}"
    );
    if !late {
        super::assert_report(live, &report);
    }
    Ok(())
}

/// The correct product over every request, response, session event, product point and model
/// answer, searched at random: whatever the agent does first, the product follows the turn,
/// and every run ends with the same report (the snapshot).
#[live_agent_test(timeout = "60s", explore = 8)]
async fn the_turn_is_followed_whether_the_agent_runs_ahead_or_not(
    live: &mut Live,
) -> anyhow::Result<()> {
    follow_the_turn(live, false).await
}

// The late-subscribing product under the same search, twenty times over (see
// `racy_searches!`).
racy_searches!(
    follow_the_turn;
    lost_01, lost_02, lost_03, lost_04, lost_05, lost_06, lost_07, lost_08, lost_09, lost_10,
    lost_11, lost_12, lost_13, lost_14, lost_15, lost_16, lost_17, lost_18, lost_19, lost_20,
);
