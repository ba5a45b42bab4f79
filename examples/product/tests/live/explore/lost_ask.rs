//! The agent runs ahead of a reconnecting product: the product's event stream drops as the turn
//! starts, and the agent asks permission to read the notes. A product that re-subscribes and
//! reads the asks it missed (the correct one) answers the ask whenever it came; one that trusts
//! the new stream to bring them (`Product::with_forgetful_reconnect`, feature `racy`) never sees
//! an ask the agent made while its stream was down, and the agent waits on it until the user
//! gives up. Whether the ask came first is the agent's progress: the model's answer (the read)
//! is a decision point, and after it went nothing else goes until the agent settled on its ask.

use std::time::Duration;

use harness_runtime::prelude::*;
use product_example::{Delivery, Outcome, Task};

use crate::support::{self, Points};

/// What the scenario says when the product lost the ask.
pub(crate) const LOST: &str = "the product lost an ask the agent made while its stream was down";
/// The agent's answer once it read the notes.
const ANSWER: &str = "Your notes say: remember the milk.";
/// The product's deadline and its settle ceiling after an abort (both scaled).
const DEADLINE: Duration = Duration::from_secs(8);
const SETTLE: Duration = Duration::from_secs(1);
/// How long nothing may happen, once the model was first asked, before the user presses stop
/// (scaled): a product that answers the ask keeps the turn going (the read, the model's second
/// answer), its steps held one by one; one that lost the ask leaves the agent waiting on it.
const USER_WAITS: Duration = Duration::from_secs(2);

/// One exploring run: the product's stream drops at the turn's first status event; the model
/// reads the notes (an ask the product approves), then answers; the product must report that
/// turn completed, the ask replied.
pub(crate) async fn answer_across_a_reconnect(
    live: &mut Live,
    forgetful: bool,
) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    live.model()
        .reply(support::read_notes(&agent))
        .reply(Reply::text(ANSWER));
    let mut product = support::product_with(&agent, Points::of(live)?)?;
    if forgetful {
        product = product.with_forgetful_reconnect();
    }
    live.wire().drop_event_stream_at("session.status", 1)?;
    let task = Task::new("What do my notes say?")
        .deadline(scaled(DEADLINE))
        .settle(scaled(SETTLE));
    let report =
        super::run_until_the_user_gives_up(live, &product, &task, USER_WAITS, LOST).await?;
    let completed = Outcome::Completed {
        text: ANSWER.to_owned(),
    };
    anyhow::ensure!(
        report.outcome == completed
            && report.asks.len() == 1
            && report.asks[0].delivery == Delivery::Replied,
        "{LOST}: the agent asked once and would have completed, the product reported {report:?}"
    );
    anyhow::ensure!(
        report.reconnects == 1,
        "the stream did not drop: {report:?}"
    );
    if !forgetful {
        super::assert_report(live, &report);
    }
    Ok(())
}

/// The correct product over every request, response, session event, product point and model
/// answer, its stream dropped as the turn starts, searched at random: whether the agent asked
/// before or after the product was subscribed again, the product answers the ask, and every run
/// ends with the same report (the snapshot).
#[live_agent_test(timeout = "60s", explore = 8)]
async fn the_ask_is_answered_whether_it_came_before_the_reconnect_or_not(
    live: &mut Live,
) -> anyhow::Result<()> {
    answer_across_a_reconnect(live, false).await
}

// The forgetful product under the same search, ten times over (see `racy_searches!`).
racy_searches!(
    answer_across_a_reconnect;
    forgot_01, forgot_02, forgot_03, forgot_04, forgot_05, forgot_06, forgot_07, forgot_08,
    forgot_09, forgot_10,
);
